#!/usr/bin/env bats
# 002_fencing_disarm_before_disruption: creates the disable file atomically, then waits for the agent's status file
# to confirm the disarm; fails closed when a running agent does not confirm.

load test_helper

@test "creates the disable file, and its directory, with reason, author and RFC 3339 time" {
  run -0 bash "$DISARM"

  [[ -f "$FENCING_DISABLE_FILE" ]]
  content="$(cat "$FENCING_DISABLE_FILE")"
  [[ "$content" =~ $FORMAT ]]
  [[ "$content" == "reason=node-configuration-update by=bashible at="* ]]
  [[ "$(stat -c %a "$FENCING_DISABLE_FILE")" == 644 ]]
  [[ "$output" == *"created $FENCING_DISABLE_FILE"* ]]
}

@test "the timestamp is the current UTC time" {
  before="$(date -u +%s)"

  run -0 bash "$DISARM"

  at="$(sed -E 's/.* at=([^ ]+)$/\1/' "$FENCING_DISABLE_FILE")"
  written="$(date -u -d "$at" +%s)"
  ((written >= before && written <= $(date -u +%s)))
}

@test "reason and author come from the environment" {
  FENCING_DISABLE_REASON=kernel-update FENCING_DISABLE_BY=ops-team run -0 bash "$DISARM"

  [[ "$(cat "$FENCING_DISABLE_FILE")" =~ ^reason=kernel-update\ by=ops-team\ at= ]]
}

@test "a multi-line reason or a spaced author is refused before anything is written" {
  FENCING_DISABLE_REASON=$'two\nlines' run -1 bash "$DISARM"
  [[ "$output" == *"must be single lines"* ]]
  FENCING_DISABLE_BY="two words" run -1 bash "$DISARM"
  [[ "$output" == *"FENCING_DISABLE_BY must be one word"* ]]
  [[ ! -e "$FENCING_DISABLE_FILE" ]]
}

@test "is idempotent: a second run keeps the file as it was and succeeds" {
  run -0 bash "$DISARM"
  first="$(cat "$FENCING_DISABLE_FILE")"
  inode="$(stat -c %i "$FENCING_DISABLE_FILE")"
  sleep 1

  run -0 bash "$DISARM"

  [[ "$(cat "$FENCING_DISABLE_FILE")" == "$first" ]]
  [[ "$(stat -c %i "$FENCING_DISABLE_FILE")" == "$inode" ]]
  [[ "$output" == *"already present"* ]]
}

@test "a disable file written by someone else keeps their line and gets ours" {
  mkdir -p "$(dirname "$FENCING_DISABLE_FILE")"
  echo "reason=hand-debugging by=alice at=2026-01-01T00:00:00Z" >"$FENCING_DISABLE_FILE"

  run -0 bash "$DISARM"

  [[ "$(head -n 1 "$FENCING_DISABLE_FILE")" == "reason=hand-debugging by=alice at=2026-01-01T00:00:00Z" ]]
  [[ "$(sed -n 2p "$FENCING_DISABLE_FILE")" =~ ^reason=node-configuration-update\ by=bashible\ at= ]]
  [[ "$(wc -l <"$FENCING_DISABLE_FILE")" == 2 ]]
  [[ "$output" == *"added our line (owners now: by=alice by=bashible"* ]]

  # Again: our line is there already, nothing changes.
  before="$(cat "$FENCING_DISABLE_FILE")"
  run -0 bash "$DISARM"
  [[ "$(cat "$FENCING_DISABLE_FILE")" == "$before" ]]
}

@test "a disable file made by hand without an owner keeps an owner line no step removes" {
  mkdir -p "$(dirname "$FENCING_DISABLE_FILE")"
  : >"$FENCING_DISABLE_FILE"

  run -0 bash "$DISARM"

  [[ "$(head -n 1 "$FENCING_DISABLE_FILE")" =~ ^reason=disable-file-without-owner\ by=unknown\ at= ]]
  [[ "$(sed -n 2p "$FENCING_DISABLE_FILE")" == *" by=bashible "* ]]
  fake curl '0 ok'
  run -0 bash "$REARM"
  [[ -f "$FENCING_DISABLE_FILE" ]]
  [[ "$(cat "$FENCING_DISABLE_FILE")" =~ ^reason=disable-file-without-owner\ by=unknown\ at=[^$'\n']*$ ]]
}

@test "the file appears complete in one rename from the same directory: no reader sees a partial file" {
  # An mv that checks the rename is same-directory and its source complete, then lingers so a reader would catch
  # a file that was being written in place.
  real_mv="$(command -v mv)"
  cat >"$FAKE_BIN/mv" <<SH
#!/usr/bin/env bash
src="\${@: -2:1}"; dst="\${@: -1}"; format='$FORMAT'
echo "\$src -> \$dst" >>"$FAKE_DIR/mv.calls"
[[ "\$(dirname "\$src")" == "\$(dirname "\$dst")" ]] || echo "rename across directories" >>"$FAKE_DIR/violations"
[[ -e "\$dst" ]] && echo "target existed before the rename" >>"$FAKE_DIR/violations"
[[ "\$(cat "\$src")" =~ \$format ]] || echo "incomplete source: \$(cat "\$src")" >>"$FAKE_DIR/violations"
sleep 0.2
exec "$real_mv" "\$@"
SH
  chmod +x "$FAKE_BIN/mv"
  mkdir -p "$(dirname "$FENCING_DISABLE_FILE")"
  (
    end=$((SECONDS + 5))
    while ((SECONDS < end)) && [[ ! -e "$FAKE_DIR/stop" ]]; do
      if content="$(cat "$FENCING_DISABLE_FILE" 2>/dev/null)"; then
        [[ "$content" =~ $FORMAT ]] || echo "reader saw a partial file: '$content'" >>"$FAKE_DIR/violations"
        echo seen >>"$FAKE_DIR/reads"
      fi
    done
  ) 3>&- &
  reader=$!

  run -0 bash "$DISARM"
  # Let the reader see the finished file at least once (bounded), then stop it.
  for ((i = 0; i < 100; i++)); do
    [[ -s "$FAKE_DIR/reads" ]] && break
    sleep 0.05
  done
  touch "$FAKE_DIR/stop"
  wait "$reader"

  [[ ! -e "$FAKE_DIR/violations" ]] || { cat "$FAKE_DIR/violations"; false; }
  [[ "$(calls mv)" == 1 ]]
  [[ -s "$FAKE_DIR/reads" ]]
  # No temporary file is left next to the disable file (and the owners' lock file).
  [[ "$(find "$(dirname "$FENCING_DISABLE_FILE")" -mindepth 1 ! -name .disable.lock | wc -l)" == 1 ]]
}

@test "no status file: no agent runs, proceeds at once with a log line" {
  run -0 bash "$DISARM"

  [[ -f "$FENCING_DISABLE_FILE" ]]
  [[ "$output" == *"no status file at $FENCING_AGENT_STATUS_FILE: no fencing agent runs on this node; proceeding"* ]]
}

@test "a stale status file (older than FENCING_AGENT_STALE_SECONDS) means no agent runs: proceeds" {
  status true absent $(($(now) - 31))

  run -0 bash "$DISARM"
  [[ "$output" == *"is stale (updated 3"?"s ago, more than 30s): no fencing agent runs; proceeding"* ]]

  rm -f "$FENCING_DISABLE_FILE"
  status true absent $(($(now) - 6))
  FENCING_AGENT_STALE_SECONDS=5 run -0 bash "$DISARM"
  [[ "$output" == *"more than 5s): no fencing agent runs"* ]]
}

@test "waits while the running agent reports armed and returns once it confirms the disarm" {
  # 20 writes of "not noticed yet" (about 1 s): long enough for the step to see them on a loaded machine.
  start_agent follow 20

  run -0 bash "$DISARM"

  [[ "$output" == *"the agent reports armed=true disable_file=absent"* ]]
  [[ "$output" == *"the agent confirms: armed=false disable_file=present"* ]]
  [[ "$output" == *"disruptive work may proceed"* ]]
  [[ -f "$FENCING_DISABLE_FILE" ]]
}

@test "a running agent that stays armed fails the step after the timeout, keeping the file" {
  start_agent armed
  start_ms=$(($(date +%s%N) / 1000000))

  FENCING_DISARM_TIMEOUT=1 run -1 bash "$DISARM"

  # At least the full timeout (the agent gets all of it), and the 1 s setting rather than the suite's 10 s.
  elapsed_ms=$(($(date +%s%N) / 1000000 - start_ms))
  ((elapsed_ms >= 1000 && elapsed_ms < 8000)) || { echo "waited ${elapsed_ms} ms"; false; }
  [[ "$output" == *"did not confirm the disarm within 1s"* ]]
  [[ "$output" == *"last: the agent reports armed=true disable_file=present"* ]]
  [[ "$output" == *"Refusing to start disruptive work"* ]]
  [[ -f "$FENCING_DISABLE_FILE" ]]
}

@test "not armed for another reason is no confirmation: the agent must report the disable file" {
  start_agent other

  FENCING_DISARM_TIMEOUT=1 run -1 bash "$DISARM"

  [[ "$output" == *"the agent reports armed=false disable_file=absent"* ]]
  [[ "$output" == *"did not confirm the disarm"* ]]
}

@test "a confirming status written before the disable file was created does not count" {
  # Left over from an earlier disable file: fresh, says disarmed, but older than this step's file.
  status false present $(($(now) - 2))

  FENCING_DISARM_TIMEOUT=1 run -1 bash "$DISARM"

  [[ "$output" == *"predates the disable file; waiting for a newer one"* ]]
  [[ -f "$FENCING_DISABLE_FILE" ]]
}

@test "a disable file found in place is confirmed by the agent's next refresh" {
  mkdir -p "$(dirname "$FENCING_DISABLE_FILE")"
  echo "reason=hand-debugging by=alice at=2026-01-01T00:00:00Z" >"$FENCING_DISABLE_FILE"
  status false present $(($(now) - 3))
  AGENT_STATUS_INTERVAL=0.5 start_agent follow 0

  run -0 bash "$DISARM"

  [[ "$output" == *"already present"* ]]
  [[ "$output" == *"the agent confirms: armed=false disable_file=present"* ]]
}

@test "a disable file found in place: a status older than the step is not a confirmation" {
  mkdir -p "$(dirname "$FENCING_DISABLE_FILE")"
  echo "reason=node-configuration-update by=bashible at=2026-01-01T00:00:00Z" >"$FENCING_DISABLE_FILE"
  status false present $(($(now) - 3))

  FENCING_DISARM_TIMEOUT=1 run -1 bash "$DISARM"

  [[ "$output" == *"predates the disable file"* ]]
  [[ -f "$FENCING_DISABLE_FILE" ]]
}

@test "malformed status content is never a confirmation and says what is wrong" {
  t="$(now)"
  check() {
    local expected="$1"
    shift
    status_file "$@"
    FENCING_DISARM_TIMEOUT=0 run -1 bash "$DISARM"
    [[ "$output" == *"malformed status file $FENCING_AGENT_STATUS_FILE: $expected; not a confirmation"* ]] ||
      { echo "expected '$expected' in: $output"; return 1; }
    [[ "$output" == *"did not confirm the disarm"* ]]
    [[ -f "$FENCING_DISABLE_FILE" ]]
  }
  # Every check would confirm if the parser guessed: armed=false and disable_file=present are always there.
  check "missing updated_unix" armed=false disable_file=present
  check "missing armed disable_file updated_unix" ""
  check "line 'garbage here' is not key=value" armed=false disable_file=present "garbage here" "updated_unix=$t"
  check "updated_unix 'soon' is not unix seconds" armed=false disable_file=present updated_unix=soon
  check "updated_unix '' is not unix seconds" armed=false disable_file=present updated_unix=
  check "updated_unix '${t}0000000' is not unix seconds" armed=false disable_file=present "updated_unix=${t}0000000"
  check "'armed' appears twice" armed=true armed=false disable_file=present "updated_unix=$t"
  check "armed 'False' is neither true nor false" armed=False disable_file=present "updated_unix=$t"
  check "disable_file 'yes' is neither present nor absent" armed=false disable_file=yes "updated_unix=$t"
}

@test "unknown keys, comments and blank lines are ignored" {
  status_file "# a comment" "" "version=2" "future_key=whatever" armed=false "x=armed=true" disable_file=present \
    "updated_unix=$(($(now) + 1))"

  run -0 bash "$DISARM"

  [[ "$output" == *"the agent confirms"* ]]
}

@test "reads one complete version of a file replaced while it is read: mixing two versions never confirms" {
  # The fake agent alternates armed=false/disable_file=absent with armed=true/disable_file=present as fast as it
  # can; a step that read the file more than once per poll could combine them into a confirmation.
  start_agent flap

  FENCING_DISARM_POLL_INTERVAL=0 FENCING_DISARM_TIMEOUT=2 run -1 bash "$DISARM"

  [[ "$output" != *"confirms"* ]]
  [[ "$output" != *"malformed"* ]]
  [[ "$output" == *"did not confirm the disarm within 2s"* ]]
}

@test "an unreadable status file is not a confirmation" {
  mkdir -p "$FENCING_AGENT_STATUS_FILE"

  FENCING_DISARM_TIMEOUT=0 run -1 bash "$DISARM"

  [[ "$output" == *"cannot read $FENCING_AGENT_STATUS_FILE"* ]]
}

@test "invalid settings are refused with the setting's name" {
  FENCING_DISARM_TIMEOUT=soon run -1 bash "$DISARM"
  [[ "$output" == *"FENCING_DISARM_TIMEOUT must be a whole number of seconds, got 'soon'"* ]]
  FENCING_AGENT_STALE_SECONDS=-1 run -1 bash "$DISARM"
  [[ "$output" == *"FENCING_AGENT_STALE_SECONDS must be a whole number of seconds, got '-1'"* ]]
  FENCING_DISARM_POLL_INTERVAL=fast run -1 bash "$DISARM"
  [[ "$output" == *"FENCING_DISARM_POLL_INTERVAL must be a number of seconds"* ]]
  [[ ! -e "$FENCING_DISABLE_FILE" ]]
}
