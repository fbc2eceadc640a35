#!/usr/bin/env bats
# 002_fencing_disarm_before_disruption: creates the disable file atomically, then waits for the agent to disarm.

load test_helper

@test "creates the disable file, and its directory, with reason, author and RFC 3339 time" {
  fake fencing-agent disarmed

  run -0 bash "$DISARM"

  [[ -f "$FENCING_DISABLE_FILE" ]]
  content="$(cat "$FENCING_DISABLE_FILE")"
  [[ "$content" =~ $FORMAT ]]
  [[ "$content" == "reason=node-configuration-update by=bashible at="* ]]
  [[ "$(stat -c %a "$FENCING_DISABLE_FILE")" == 644 ]]
  [[ "$output" == *"created $FENCING_DISABLE_FILE"* ]]
}

@test "the timestamp is the current UTC time" {
  fake fencing-agent disarmed
  before="$(date -u +%s)"

  run -0 bash "$DISARM"

  at="$(sed -E 's/.* at=([^ ]+)$/\1/' "$FENCING_DISABLE_FILE")"
  written="$(date -u -d "$at" +%s)"
  ((written >= before - 1 && written <= $(date -u +%s)))
}

@test "reason and author come from the environment" {
  fake fencing-agent disarmed

  FENCING_DISABLE_REASON=kernel-update FENCING_DISABLE_BY=ops-team run -0 bash "$DISARM"

  [[ "$(cat "$FENCING_DISABLE_FILE")" =~ ^reason=kernel-update\ by=ops-team\ at= ]]
}

@test "a multi-line reason or a spaced author is refused before anything is written" {
  fake fencing-agent disarmed

  FENCING_DISABLE_REASON=$'two\nlines' run -1 bash "$DISARM"
  [[ "$output" == *"must be single lines"* ]]
  FENCING_DISABLE_BY="two words" run -1 bash "$DISARM"
  [[ "$output" == *"FENCING_DISABLE_BY must be one word"* ]]
  [[ ! -e "$FENCING_DISABLE_FILE" ]]
}

@test "is idempotent: a second run keeps the file as it was and succeeds" {
  fake fencing-agent disarmed
  run -0 bash "$DISARM"
  first="$(cat "$FENCING_DISABLE_FILE")"
  inode="$(stat -c %i "$FENCING_DISABLE_FILE")"
  sleep 1

  run -0 bash "$DISARM"

  [[ "$(cat "$FENCING_DISABLE_FILE")" == "$first" ]]
  [[ "$(stat -c %i "$FENCING_DISABLE_FILE")" == "$inode" ]]
  [[ "$output" == *"already present"* ]]
}

@test "a disable file written by someone else is kept unchanged" {
  fake fencing-agent disarmed
  mkdir -p "$(dirname "$FENCING_DISABLE_FILE")"
  echo "reason=hand-debugging by=alice at=2026-01-01T00:00:00Z" >"$FENCING_DISABLE_FILE"

  run -0 bash "$DISARM"

  [[ "$(cat "$FENCING_DISABLE_FILE")" == "reason=hand-debugging by=alice at=2026-01-01T00:00:00Z" ]]
}

@test "the file appears complete in one rename from the same directory: no reader sees a partial file" {
  fake fencing-agent disarmed
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
  ) &
  reader=$!

  run -0 bash "$DISARM"
  sleep 0.1
  touch "$FAKE_DIR/stop"
  wait "$reader"

  [[ ! -e "$FAKE_DIR/violations" ]] || { cat "$FAKE_DIR/violations"; false; }
  [[ "$(calls mv)" == 1 ]]
  [[ -s "$FAKE_DIR/reads" ]]
  # No temporary file is left next to the disable file.
  [[ "$(find "$(dirname "$FENCING_DISABLE_FILE")" -mindepth 1 | wc -l)" == 1 ]]
}

@test "no agent installed: proceeds at once" {
  PATH="$(path_without fencing-agent)" run -0 bash "$DISARM"

  [[ -f "$FENCING_DISABLE_FILE" ]]
  [[ "$output" == *"no agent to wait for, proceeding"* ]]
}

@test "waits while the agent reports armed and returns once it reports disarmed" {
  fake fencing-agent armed armed armed disarmed

  run -0 bash "$DISARM"

  [[ "$(calls fencing-agent)" == 4 ]]
  [[ "$output" == *"agent reports disarmed"* ]]
  grep -qx -- "status --json" "$FAKE_DIR/fencing-agent.calls"
}

@test "reads the JSON without jq too" {
  fake fencing-agent armed disarmed

  PATH="$(path_without jq)" run -0 bash "$DISARM"

  [[ "$(calls fencing-agent)" == 2 ]]
  [[ "$output" == *"agent reports disarmed"* ]]
}

@test "an agent that stays armed makes the step fail after the timeout, keeping the file" {
  fake fencing-agent armed
  start=$SECONDS

  FENCING_DISARM_TIMEOUT=1 run -1 bash "$DISARM"

  ((SECONDS - start >= 1 && SECONDS - start <= 4))
  [[ "$output" == *"did not report disarmed within 1s"* ]]
  [[ "$output" == *"agent still reports armed"* ]]
  [[ "$output" == *"Refusing to start disruptive work"* ]]
  [[ -f "$FENCING_DISABLE_FILE" ]]
}

@test "without jq an armed agent is still seen as armed" {
  fake fencing-agent armed

  PATH="$(path_without jq)" FENCING_DISARM_TIMEOUT=1 run -1 bash "$DISARM"

  [[ "$output" == *"agent still reports armed"* ]]
}

@test "an agent that does not answer on its socket counts as no agent: proceeds" {
  fake fencing-agent noagent

  run -0 bash "$DISARM"

  [[ "$(calls fencing-agent)" == 1 ]]
  [[ "$output" == *"no running agent to disarm, proceeding"* ]]
}

@test "CLI errors are retried until the agent answers" {
  fake fencing-agent error error disarmed

  run -0 bash "$DISARM"

  [[ "$(calls fencing-agent)" == 3 ]]
}

@test "not armed for another reason counts only once the agent has had time to notice the file" {
  fake fencing-agent disarmed-other

  FENCING_AGENT_NOTICE_SECONDS=1 run -0 bash "$DISARM"
  (($(calls fencing-agent) > 1))
  [[ "$output" == *"agent reports disarmed"* ]]

  rm -f "$FENCING_DISABLE_FILE"
  fake fencing-agent disarmed-other
  FENCING_AGENT_NOTICE_SECONDS=30 FENCING_DISARM_TIMEOUT=1 run -1 bash "$DISARM"
  [[ "$output" == *"has not reported the disable file yet"* ]]
}

@test "passes the socket to the CLI when one is configured" {
  fake fencing-agent disarmed

  FENCING_AGENT_SOCKET=/tmp/agent.sock run -0 bash "$DISARM"

  grep -qx -- "status --json --socket /tmp/agent.sock" "$FAKE_DIR/fencing-agent.calls"
}

@test "without the CLI, the metrics endpoint is polled until fencing_armed is 0" {
  fake curl '0 # TYPE fencing_armed gauge\nfencing_armed{group="workers",node="node-1"} 1.0' \
    '0 fencing_armed{group="workers",node="node-1"} 0.0\nfencing_quorum_held 1.0'

  PATH="$(path_without fencing-agent)" FENCING_AGENT_METRICS_URL=http://127.0.0.1:9100/metrics \
    FENCING_AGENT_NOTICE_SECONDS=0 run -0 bash "$DISARM"

  [[ "$(calls curl)" == 2 ]]
  [[ "$output" == *"agent metrics report fencing_armed 0.0"* ]]
  grep -q "http://127.0.0.1:9100/metrics" "$FAKE_DIR/curl.calls"
}

@test "metrics: nothing listening means no agent; a missing metric times out" {
  fake curl 7
  PATH="$(path_without fencing-agent)" FENCING_AGENT_METRICS_URL=http://127.0.0.1:9100/metrics run -0 bash "$DISARM"
  [[ "$output" == *"no running agent to disarm"* ]]

  fake curl '0 memberlist_members 3'
  PATH="$(path_without fencing-agent)" FENCING_AGENT_METRICS_URL=http://127.0.0.1:9100/metrics \
    FENCING_DISARM_TIMEOUT=1 run -1 bash "$DISARM"
  [[ "$output" == *"has no fencing_armed metric"* ]]
}

@test "invalid settings are refused with the setting's name" {
  FENCING_DISARM_TIMEOUT=soon run -1 bash "$DISARM"
  [[ "$output" == *"timeout must be a whole number of seconds, got 'soon'"* ]]
  FENCING_DISARM_POLL_INTERVAL=fast run -1 bash "$DISARM"
  [[ "$output" == *"poll interval must be a number of seconds"* ]]
}
