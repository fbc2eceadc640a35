#!/usr/bin/env bats
# fencing-maintenance: the plain script for distributions without bashible, running the same step scripts.

load test_helper

@test "disarm creates the file as fencing-maintenance and waits for the agent's confirmation" {
  start_agent follow 2

  run -0 "$MAINTENANCE" disarm

  [[ "$(cat "$FENCING_DISABLE_FILE")" =~ ^reason=maintenance\ by=fencing-maintenance\ at= ]]
  [[ "$output" == *"the agent confirms: armed=false disable_file=present"* ]]
}

@test "disarm fails closed when the running agent does not confirm within --timeout" {
  start_agent armed

  run -1 "$MAINTENANCE" disarm --reason kernel-update --by alice --timeout 1

  [[ "$(cat "$FENCING_DISABLE_FILE")" =~ ^reason=kernel-update\ by=alice\ at= ]]
  [[ "$output" == *"did not confirm the disarm within 1s"* ]]
}

@test "rearm removes its own file once the kubelet is healthy, and never bashible's" {
  fake curl '0 ok'
  run -0 "$MAINTENANCE" disarm
  run -0 "$MAINTENANCE" rearm
  [[ ! -e "$FENCING_DISABLE_FILE" ]]
  [[ "$(calls curl)" == 1 ]]

  FENCING_DISABLE_BY=bashible run -0 bash "$DISARM"
  run -0 "$MAINTENANCE" rearm
  [[ -f "$FENCING_DISABLE_FILE" ]]
  [[ "$output" == *"not written by 'fencing-maintenance'"* ]]
}

@test "rearm --no-health-check removes the file without asking the kubelet; --timeout bounds the health wait" {
  fake curl 7
  run -0 "$MAINTENANCE" disarm

  run -1 "$MAINTENANCE" rearm --timeout 1
  [[ "$output" == *"did not answer within 1s"* ]]
  [[ -f "$FENCING_DISABLE_FILE" ]]

  : >"$FAKE_DIR/curl.calls"
  run -0 "$MAINTENANCE" rearm --no-health-check
  [[ ! -e "$FENCING_DISABLE_FILE" ]]
  [[ "$(calls curl)" == 0 ]]
}

@test "softdog runs the softdog step with --margin" {
  export FENCING_HOST_ROOT="$BATS_TEST_TMPDIR/host"
  fake modprobe ok
  fake chown ""

  run -0 "$MAINTENANCE" softdog --margin 45

  [[ "$(cat "$FAKE_DIR/modprobe.calls")" == "softdog soft_margin=45 soft_panic=1 nowayout=0" ]]
}

@test "runs the step scripts of its directory, through a symlink too, or of FENCING_STEPS_DIR" {
  mkdir -p "$BATS_TEST_TMPDIR/sbin"
  ln -s "$MAINTENANCE" "$BATS_TEST_TMPDIR/sbin/fencing-maintenance"
  run -0 "$BATS_TEST_TMPDIR/sbin/fencing-maintenance" disarm
  [[ "$output" == *"fencing-disarm: created $FENCING_DISABLE_FILE"* ]]

  # A stand-in step proves the command runs the step file rather than an implementation of its own.
  mkdir -p "$BATS_TEST_TMPDIR/steps"
  # shellcheck disable=SC2016 # expanded by the stand-in step, not here
  printf '#!/usr/bin/env bash\necho "stand-in 002 by=$FENCING_DISABLE_BY reason=$FENCING_DISABLE_REASON"\n' \
    >"$BATS_TEST_TMPDIR/steps/002_fencing_disarm_before_disruption.sh.tpl"
  FENCING_STEPS_DIR="$BATS_TEST_TMPDIR/steps" run -0 "$MAINTENANCE" disarm --reason x
  [[ "$output" == "stand-in 002 by=fencing-maintenance reason=x" ]]

  FENCING_STEPS_DIR="$BATS_TEST_TMPDIR/steps" run -1 "$MAINTENANCE" rearm
  [[ "$output" == *"999_fencing_rearm_after_disruption.sh.tpl is missing"* ]]
}

@test "usage errors exit 2 with the usage" {
  run -2 "$MAINTENANCE"
  [[ "$output" == *"a command is needed"* && "$output" == *"Usage: fencing-maintenance disarm"* ]]
  run -2 "$MAINTENANCE" reboot
  [[ "$output" == *"unknown command 'reboot'"* ]]
  run -2 "$MAINTENANCE" disarm --margin 5
  [[ "$output" == *"'--margin' is not an option of 'disarm'"* ]]
  run -2 "$MAINTENANCE" rearm --by
  [[ "$output" == *"--by needs a value"* ]]
  [[ ! -e "$FENCING_DISABLE_FILE" ]]
}
