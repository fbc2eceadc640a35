#!/usr/bin/env bats
# 001_fencing_softdog: loads and persists softdog on nodes without a hardware watchdog; root-only device.

load test_helper

host_setup() {
  export FENCING_HOST_ROOT="$BATS_TEST_TMPDIR/host"
  mkdir -p "$FENCING_HOST_ROOT"
  fake chown ""
}

hardware_watchdog() {
  mkdir -p "$FENCING_HOST_ROOT/sys/class/watchdog/watchdog0" "$FENCING_HOST_ROOT/dev"
  echo "iTCO_wdt" >"$FENCING_HOST_ROOT/sys/class/watchdog/watchdog0/identity"
  touch "$FENCING_HOST_ROOT/dev/watchdog" "$FENCING_HOST_ROOT/dev/watchdog0"
}

@test "no watchdog: loads softdog with the margin, soft_panic=1 and nowayout=0, and persists it" {
  host_setup
  fake modprobe ok

  run -0 bash "$SOFTDOG"

  [[ "$(cat "$FAKE_DIR/modprobe.calls")" == "softdog soft_margin=60 soft_panic=1 nowayout=0" ]]
  [[ "$(cat "$FENCING_HOST_ROOT/etc/modules-load.d/fencing-softdog.conf")" == softdog ]]
  [[ "$(cat "$FENCING_HOST_ROOT/etc/modprobe.d/fencing-softdog.conf")" == \
    "options softdog soft_margin=60 soft_panic=1 nowayout=0" ]]
  [[ "$(cat "$FENCING_HOST_ROOT/etc/udev/rules.d/60-fencing-watchdog.rules")" == \
    'KERNEL=="watchdog*", OWNER="root", GROUP="root", MODE="0600"' ]]
  [[ "$(stat -c %a "$FENCING_HOST_ROOT/etc/modprobe.d/fencing-softdog.conf")" == 644 ]]
  [[ "$output" == *"loaded softdog (soft_margin=60 soft_panic=1 nowayout=0)"* ]]
}

@test "the watchdog device nodes become root-only: 0600 root:root" {
  host_setup
  fake modprobe ok

  run -0 bash "$SOFTDOG"

  [[ "$(stat -c %a "$FENCING_HOST_ROOT/dev/watchdog")" == 600 ]]
  [[ "$(stat -c %a "$FENCING_HOST_ROOT/dev/watchdog0")" == 600 ]]
  [[ "$(cat "$FAKE_DIR/chown.calls")" == \
    "root:root -- $FENCING_HOST_ROOT/dev/watchdog $FENCING_HOST_ROOT/dev/watchdog0" ]]
  [[ "$output" == *"root:root 0600"* ]]
}

@test "the margin comes from FENCING_SOFTDOG_MARGIN" {
  host_setup
  fake modprobe ok

  FENCING_SOFTDOG_MARGIN=15 run -0 bash "$SOFTDOG"

  [[ "$(cat "$FAKE_DIR/modprobe.calls")" == "softdog soft_margin=15 soft_panic=1 nowayout=0" ]]
  [[ "$(cat "$FENCING_HOST_ROOT/etc/modprobe.d/fencing-softdog.conf")" == *"soft_margin=15 "* ]]
}

@test "is idempotent: a second run loads nothing and rewrites nothing" {
  host_setup
  fake modprobe ok
  run -0 bash "$SOFTDOG"
  inode="$(stat -c %i "$FENCING_HOST_ROOT/etc/modprobe.d/fencing-softdog.conf")"

  run -0 bash "$SOFTDOG"

  [[ "$(calls modprobe)" == 1 ]]
  [[ "$output" != *"wrote"* ]]
  [[ "$output" == *"softdog is already loaded"* ]]
  [[ "$(stat -c %i "$FENCING_HOST_ROOT/etc/modprobe.d/fencing-softdog.conf")" == "$inode" ]]
  [[ "$(stat -c %a "$FENCING_HOST_ROOT/dev/watchdog")" == 600 ]]
}

@test "a new margin while softdog is loaded is persisted for the next boot, not reloaded" {
  host_setup
  fake modprobe ok
  run -0 bash "$SOFTDOG"

  FENCING_SOFTDOG_MARGIN=20 run -0 bash "$SOFTDOG"

  [[ "$(calls modprobe)" == 1 ]]
  [[ "$(cat "$FENCING_HOST_ROOT/etc/modprobe.d/fencing-softdog.conf")" == *"soft_margin=20 "* ]]
  [[ "$output" == *"the new options (soft_margin=20 soft_panic=1 nowayout=0) apply at the next boot"* ]]
}

@test "a hardware watchdog is kept: no softdog, no files" {
  host_setup
  fake modprobe ok
  hardware_watchdog

  run -0 bash "$SOFTDOG"

  [[ "$(calls modprobe)" == 0 ]]
  [[ ! -e "$FENCING_HOST_ROOT/etc" ]]
  [[ "$(calls chown)" == 0 ]]
  [[ "$output" == *"a watchdog device is present: watchdog0 (iTCO_wdt); softdog is not needed"* ]]
}

@test "a hardware watchdog found later removes the softdog settings written before" {
  host_setup
  fake modprobe ok
  run -0 bash "$SOFTDOG"
  mkdir -p "$FENCING_HOST_ROOT/sys/class/watchdog/watchdog1"
  echo "iTCO_wdt" >"$FENCING_HOST_ROOT/sys/class/watchdog/watchdog1/identity"

  run -0 bash "$SOFTDOG"

  [[ ! -e "$FENCING_HOST_ROOT/etc/modules-load.d/fencing-softdog.conf" ]]
  [[ ! -e "$FENCING_HOST_ROOT/etc/modprobe.d/fencing-softdog.conf" ]]
  [[ ! -e "$FENCING_HOST_ROOT/etc/udev/rules.d/60-fencing-watchdog.rules" ]]
  [[ "$output" == *"watchdog1 (iTCO_wdt)"* ]]
  [[ "$output" == *"removed $FENCING_HOST_ROOT/etc/modprobe.d/fencing-softdog.conf"* ]]
}

@test "a /dev/watchdog without sysfs that is not softdog's counts as present" {
  host_setup
  fake modprobe ok
  mkdir -p "$FENCING_HOST_ROOT/dev"
  touch "$FENCING_HOST_ROOT/dev/watchdog"

  run -0 bash "$SOFTDOG"

  [[ "$(calls modprobe)" == 0 ]]
  [[ "$output" == *"(no sysfs entry); softdog is not needed"* ]]
}

@test "a failing modprobe fails the step with its message" {
  host_setup
  fake modprobe fail

  run -1 bash "$SOFTDOG"

  [[ "$output" == *"modprobe softdog soft_margin=60 soft_panic=1 nowayout=0 failed: modprobe: FATAL: Module softdog not found"* ]]
}

@test "without modprobe the step fails and says so" {
  host_setup

  PATH="$(path_without)" run -1 bash "$SOFTDOG"

  [[ "$output" == *"modprobe is not installed; cannot load softdog"* ]]
}

@test "a device that never appears fails the step after a bound" {
  host_setup
  fake modprobe nodevice

  run -1 bash "$SOFTDOG"

  [[ "$output" == *"softdog is loaded but $FENCING_HOST_ROOT/dev/watchdog did not appear within 3s"* ]]
}

@test "an invalid margin is refused before anything is done" {
  host_setup
  fake modprobe ok
  for margin in 0 65536 soon -5 1.5; do
    FENCING_SOFTDOG_MARGIN="$margin" run -1 bash "$SOFTDOG"
    [[ "$output" == *"FENCING_SOFTDOG_MARGIN must be a whole number of seconds from 1 to 65535, got '$margin'"* ]]
  done
  [[ "$(calls modprobe)" == 0 ]]
  [[ ! -e "$FENCING_HOST_ROOT/etc" ]]
}

kernel_panic() {
  mkdir -p "$FENCING_HOST_ROOT/proc/sys/kernel"
  echo "$1" >"$FENCING_HOST_ROOT/proc/sys/kernel/panic"
}

@test "kernel.panic 0: set to 10 s and persisted, so a softdog panic reboots instead of halting" {
  host_setup
  fake modprobe ok
  kernel_panic 0

  run -0 bash "$SOFTDOG"

  [[ "$(cat "$FENCING_HOST_ROOT/proc/sys/kernel/panic")" == 10 ]]
  [[ "$(cat "$FENCING_HOST_ROOT/etc/sysctl.d/60-fencing-panic.conf")" == "kernel.panic = 10" ]]
  [[ "$output" == *"kernel.panic was 0 (a softdog expiry would halt the node): set to 10 s and persisted"* ]]
}

@test "kernel.panic already non-zero: the operator's value is left alone and nothing is persisted" {
  host_setup
  fake modprobe ok
  kernel_panic 30

  run -0 bash "$SOFTDOG"

  [[ "$(cat "$FENCING_HOST_ROOT/proc/sys/kernel/panic")" == 30 ]]
  [[ ! -e "$FENCING_HOST_ROOT/etc/sysctl.d/60-fencing-panic.conf" ]]
  [[ "$output" == *"kernel.panic is 30"* ]]
}

@test "FENCING_PANIC_REBOOT_SECONDS chooses the value; 0 never touches kernel.panic" {
  host_setup
  fake modprobe ok
  kernel_panic 0

  FENCING_PANIC_REBOOT_SECONDS=45 run -0 bash "$SOFTDOG"
  [[ "$(cat "$FENCING_HOST_ROOT/proc/sys/kernel/panic")" == 45 ]]

  kernel_panic 0
  rm -f "$FENCING_HOST_ROOT/etc/sysctl.d/60-fencing-panic.conf"
  FENCING_PANIC_REBOOT_SECONDS=0 run -0 bash "$SOFTDOG"
  [[ "$(cat "$FENCING_HOST_ROOT/proc/sys/kernel/panic")" == 0 ]]
  [[ ! -e "$FENCING_HOST_ROOT/etc/sysctl.d/60-fencing-panic.conf" ]]
}

@test "a malformed FENCING_PANIC_REBOOT_SECONDS is refused before anything is written" {
  host_setup
  fake modprobe ok

  FENCING_PANIC_REBOOT_SECONDS=10s run -1 bash "$SOFTDOG"

  [[ "$output" == *"FENCING_PANIC_REBOOT_SECONDS must be a whole number of seconds from 0"* ]]
  [[ "$(calls modprobe)" == 0 ]]
  [[ ! -e "$FENCING_HOST_ROOT/etc/modprobe.d/fencing-softdog.conf" ]]
}

@test "a hardware watchdog: the panic setting written earlier is removed with the softdog files" {
  host_setup
  fake modprobe ok
  kernel_panic 0
  run -0 bash "$SOFTDOG"
  [[ -e "$FENCING_HOST_ROOT/etc/sysctl.d/60-fencing-panic.conf" ]]

  rm -rf "${FENCING_HOST_ROOT:?}/sys" "${FENCING_HOST_ROOT:?}/dev"
  hardware_watchdog
  run -0 bash "$SOFTDOG"

  [[ ! -e "$FENCING_HOST_ROOT/etc/sysctl.d/60-fencing-panic.conf" ]]
}
