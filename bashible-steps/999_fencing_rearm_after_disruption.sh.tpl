#!/usr/bin/env bash
# Bashible step: let this node's fencing agent re-arm after disruptive work, once the node is healthy again.
#
# Runs last. Waits, bounded in time, until the kubelet answers its health endpoint, then removes our line from the
# disable file written by 002_fencing_disarm_before_disruption (one line per owner), and the file with its last line.
# Lines of other owners (an operator disarming by hand, a file without any "by=") stay, and so does the file then. The agent re-arms on its own when its arming rules allow (quorum held
# for the arming delay). Idempotent: no file ⇒ nothing to do. On a failed health check the file stays and the step
# fails, so bashible retries the run and the node stays disarmed meanwhile.
#
# Environment (all optional; defaults are for a node):
#   FENCING_DISABLE_FILE           the disable file                        (/var/run/fencing-agent/disable)
#   FENCING_DISABLE_BY             the "by=" this step removes              (bashible)
#   FENCING_HEALTH_URL             must answer 2xx before re-arming         (http://127.0.0.1:10248/healthz, kubelet)
#                                  empty: no health check
#   FENCING_HEALTH_TIMEOUT         seconds to wait for health               (300)
#   FENCING_HEALTH_POLL_INTERVAL   seconds between two health checks        (5)
set -Eeuo pipefail

disable_file="${FENCING_DISABLE_FILE:-/var/run/fencing-agent/disable}"
by="${FENCING_DISABLE_BY:-bashible}"
health_url="${FENCING_HEALTH_URL-http://127.0.0.1:10248/healthz}"
timeout="${FENCING_HEALTH_TIMEOUT:-300}"
poll_interval="${FENCING_HEALTH_POLL_INTERVAL:-5}"

log() {
  echo "fencing-rearm: $*" >&2
}

fail() {
  log "ERROR: $*"
  exit 1
}

[[ "$timeout" =~ ^[0-9]+$ ]] || fail "FENCING_HEALTH_TIMEOUT must be a whole number of seconds, got '$timeout'"
[[ "$poll_interval" =~ ^[0-9]+([.][0-9]+)?$ ]] ||
  fail "FENCING_HEALTH_POLL_INTERVAL must be a number of seconds, got '$poll_interval'"

if [[ ! -e "$disable_file" ]]; then
  log "no disable file at $disable_file: nothing to re-arm"
  exit 0
fi

# Our line, if any; the content is matched, never executed.
ours() {
  local line
  while IFS= read -r line || [[ -n "$line" ]]; do
    if [[ " $line " == *" by=$by "* ]]; then
      return 0
    fi
  done <"$disable_file"
  return 1
}
if ! ours; then
  log "leaving $disable_file in place: it was not written by '$by' ($(head -n 1 -- "$disable_file" 2>/dev/null || true))"
  exit 0
fi

if [[ -n "$health_url" ]]; then
  command -v curl >/dev/null 2>&1 || fail "curl is required to check $health_url (set FENCING_HEALTH_URL= to skip)"
  started=$SECONDS
  until curl -fsS --max-time 2 -o /dev/null -- "$health_url" 2>/dev/null; do
    if ((SECONDS - started > timeout)); then
      fail "the node is not healthy: $health_url did not answer within ${timeout}s;" \
        "$disable_file stays in place (the agent stays disarmed) and bashible will retry."
    fi
    sleep "$poll_interval"
  done
  log "$health_url is healthy"
fi

dir="$(dirname -- "$disable_file")"
if command -v flock >/dev/null 2>&1; then
  exec {lock_fd}>"$dir/.disable.lock"
  flock -w 30 "$lock_fd" || fail "cannot lock $dir/.disable.lock within 30s (another owner holds it); $disable_file stays"
else
  log "flock not found: changing $disable_file without the lock"
fi
if [[ ! -e "$disable_file" ]]; then
  log "$disable_file is gone already: nothing to re-arm"
  exit 0
fi
rest=""
removed=""
while IFS= read -r line || [[ -n "$line" ]]; do
  if [[ " $line " == *" by=$by "* ]]; then
    removed="$line"
  elif [[ -n "$line" ]]; then
    rest+="$line"$'\n'
  fi
done <"$disable_file"
if [[ -z "$removed" ]]; then
  log "leaving $disable_file in place: our line is gone already"
  exit 0
fi
if [[ -z "$rest" ]]; then
  rm -f -- "$disable_file"
  log "removed $disable_file ($removed); the agent re-arms when its arming rules allow"
  exit 0
fi
tmp="$(mktemp -- "$dir/.disable.XXXXXX")"
trap 'rm -f -- "$tmp"' EXIT
printf '%s' "$rest" >"$tmp"
chmod 0644 -- "$tmp"
mv -f -- "$tmp" "$disable_file"
log "removed our line ($removed) from $disable_file; the node stays disarmed for its other owners:" \
  "$(grep -o 'by=[^ ]*' -- "$disable_file" | tr '\n' ' ')"
