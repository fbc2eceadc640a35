#!/usr/bin/env bats
# 999_fencing_rearm_after_disruption: removes our disable file once the node is healthy again.

load test_helper

write_disable_file() {
  mkdir -p "$(dirname "$FENCING_DISABLE_FILE")"
  echo "$1" >"$FENCING_DISABLE_FILE"
}

@test "no disable file: nothing to do, no health check" {
  fake curl 0

  run -0 bash "$REARM"

  [[ "$output" == *"nothing to re-arm"* ]]
  [[ "$(calls curl)" == 0 ]]
}

@test "removes the file bashible wrote once the kubelet is healthy" {
  fake curl '0 ok'
  write_disable_file "reason=node-configuration-update by=bashible at=2026-11-22T10:00:00Z"

  run -0 bash "$REARM"

  [[ ! -e "$FENCING_DISABLE_FILE" ]]
  grep -q "http://127.0.0.1:10248/healthz" "$FAKE_DIR/curl.calls"
  [[ "$output" == *"removed $FENCING_DISABLE_FILE"* ]]
}

@test "is idempotent: a second run finds nothing to do" {
  fake curl '0 ok'
  write_disable_file "reason=node-configuration-update by=bashible at=2026-11-22T10:00:00Z"
  run -0 bash "$REARM"

  run -0 bash "$REARM"

  [[ "$output" == *"nothing to re-arm"* ]]
  [[ ! -e "$FENCING_DISABLE_FILE" ]]
}

@test "a file written by someone else stays" {
  fake curl '0 ok'
  write_disable_file "reason=hand-debugging by=alice at=2026-11-22T10:00:00Z"

  run -0 bash "$REARM"

  [[ -f "$FENCING_DISABLE_FILE" ]]
  [[ "$output" == *"not written by 'bashible'"* ]]
  [[ "$(calls curl)" == 0 ]]
}

@test "an author that merely contains ours is not ours" {
  fake curl '0 ok'
  write_disable_file "reason=x by=bashible-test at=2026-11-22T10:00:00Z"

  run -0 bash "$REARM"

  [[ -f "$FENCING_DISABLE_FILE" ]]
}

@test "removes the file of a custom author when told to" {
  fake curl '0 ok'
  write_disable_file "reason=kernel-update by=ops-team at=2026-11-22T10:00:00Z"

  FENCING_DISABLE_BY=ops-team run -0 bash "$REARM"

  [[ ! -e "$FENCING_DISABLE_FILE" ]]
}

@test "waits until the node is healthy before removing" {
  fake curl 7 22 '0 ok'
  write_disable_file "reason=node-configuration-update by=bashible at=2026-11-22T10:00:00Z"

  run -0 bash "$REARM"

  [[ "$(calls curl)" == 3 ]]
  [[ ! -e "$FENCING_DISABLE_FILE" ]]
}

@test "a node that stays unhealthy fails the step after the timeout and stays disarmed" {
  fake curl 7
  write_disable_file "reason=node-configuration-update by=bashible at=2026-11-22T10:00:00Z"
  start=$SECONDS

  FENCING_HEALTH_TIMEOUT=1 run -1 bash "$REARM"

  ((SECONDS - start >= 1 && SECONDS - start <= 4))
  [[ -f "$FENCING_DISABLE_FILE" ]]
  [[ "$output" == *"the node is not healthy: http://127.0.0.1:10248/healthz did not answer within 1s"* ]]
}

@test "an empty health URL skips the health check" {
  fake curl 7
  write_disable_file "reason=node-configuration-update by=bashible at=2026-11-22T10:00:00Z"

  FENCING_HEALTH_URL='' run -0 bash "$REARM"

  [[ ! -e "$FENCING_DISABLE_FILE" ]]
  [[ "$(calls curl)" == 0 ]]
}

@test "without curl the step refuses to guess the node's health" {
  write_disable_file "reason=node-configuration-update by=bashible at=2026-11-22T10:00:00Z"

  PATH="$(path_without curl)" run -1 bash "$REARM"

  [[ "$output" == *"curl is required"* ]]
  [[ -f "$FENCING_DISABLE_FILE" ]]
}

@test "around maintenance: disarm, the agent follows the file, re-arm" {
  start_agent follow 2
  fake curl '0 ok'

  run -0 bash "$DISARM"
  [[ -f "$FENCING_DISABLE_FILE" ]]
  [[ "$output" == *"the agent confirms: armed=false disable_file=present"* ]]

  run -0 bash "$REARM"
  [[ ! -e "$FENCING_DISABLE_FILE" ]]
  # The fake agent notices the removal and reports armed again.
  for ((i = 0; i < 100; i++)); do
    grep -qx armed=true "$FENCING_AGENT_STATUS_FILE" && break
    sleep 0.05
  done
  grep -qx armed=true "$FENCING_AGENT_STATUS_FILE"
  grep -qx disable_file=absent "$FENCING_AGENT_STATUS_FILE"
}

@test "two owners: each re-arm removes only its own line, and the last one the file" {
  fake curl '0 ok'
  mkdir -p "$(dirname "$FENCING_DISABLE_FILE")"
  printf '%s\n' "reason=kernel-work by=fencing-maintenance at=2026-11-22T10:00:00Z" \
    "reason=node-configuration-update by=bashible at=2026-11-22T10:01:00Z" >"$FENCING_DISABLE_FILE"

  run -0 bash "$REARM"

  [[ -f "$FENCING_DISABLE_FILE" ]]
  [[ "$(cat "$FENCING_DISABLE_FILE")" == "reason=kernel-work by=fencing-maintenance at=2026-11-22T10:00:00Z" ]]
  [[ "$output" == *"stays disarmed for its other owners: by=fencing-maintenance"* ]]

  FENCING_DISABLE_BY=fencing-maintenance run -0 bash "$REARM"
  [[ ! -e "$FENCING_DISABLE_FILE" ]]
}
