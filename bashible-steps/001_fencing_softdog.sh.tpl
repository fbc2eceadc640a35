#!/usr/bin/env bash
# Bashible step: a software watchdog (the kernel's softdog) for nodes without a hardware watchdog.
#
# The fencing agent needs /dev/watchdog to arm. A node with a hardware watchdog (any device in
# /sys/class/watchdog whose identity is not softdog's "Software Watchdog") keeps it: the step changes nothing, and
# removes the softdog settings it wrote earlier, if any. Otherwise the step
#   1. persists softdog for the next boots: /etc/modules-load.d/fencing-softdog.conf ("softdog") and
#      /etc/modprobe.d/fencing-softdog.conf ("options softdog soft_margin=<s> soft_panic=1 nowayout=0"),
#      plus a udev rule that keeps the device root-only (0600 root:root);
#   2. loads it now when it is not loaded: modprobe softdog soft_margin=<s> soft_panic=1 nowayout=0;
#   3. makes /dev/watchdog and /dev/watchdogN root-only (0600 root:root): only the agent (root) may open it, since
#      any process that opens it and stops writing resets the node.
# soft_panic=1: on expiry the kernel panics (kdump and panic= reboot apply) instead of a plain restart, so the
# cause is visible. nowayout=0: the agent's magic close must disarm the watchdog (maintenance, disable file, agent
# restart); a kernel built with CONFIG_WATCHDOG_NOWAYOUT would otherwise make every disarm a reset.
# soft_margin is only the timeout until the agent sets its own (WDIOC_SETTIMEOUT, spec.fencing.watchdog.timeout).
#   4. makes the panic reboot: with kernel.panic = 0 a softdog panic halts the node (still fenced, but it never comes
#      back by itself), so when kernel.panic is 0 the step sets it to FENCING_PANIC_REBOOT_SECONDS now and persists
#      it in /etc/sysctl.d/60-fencing-panic.conf; a non-zero kernel.panic (the operator's choice) is left alone.
# The agent retries opening a missing device, so it arms once the module is loaded, without a restart.
# Idempotent: files are rewritten only when their content changes; a loaded module is not reloaded (the agent may
# hold the device): changed options apply at the next boot, and the step says so.
#
# Environment (all optional):
#   FENCING_SOFTDOG_MARGIN   softdog's soft_margin in seconds, 1..65535        (60)
#   FENCING_PANIC_REBOOT_SECONDS  kernel.panic to set when it is 0, 1..3600; 0 = never touch kernel.panic (10)
#   FENCING_HOST_ROOT        prefix of every host path read or written here    (empty: the node's own /etc, /sys,
#                            /dev; the tests point it at a temp dir)
set -Eeuo pipefail

margin="${FENCING_SOFTDOG_MARGIN:-60}"
panic_reboot="${FENCING_PANIC_REBOOT_SECONDS:-10}"
root="${FENCING_HOST_ROOT:-}"

log() {
  echo "fencing-softdog: $*" >&2
}

fail() {
  log "ERROR: $*"
  exit 1
}

if [[ ! "$margin" =~ ^[0-9]{1,5}$ ]] || ((10#$margin < 1 || 10#$margin > 65535)); then
  fail "FENCING_SOFTDOG_MARGIN must be a whole number of seconds from 1 to 65535, got '$margin'"
fi
margin=$((10#$margin))
if [[ ! "$panic_reboot" =~ ^[0-9]{1,4}$ ]] || ((10#$panic_reboot > 3600)); then
  fail "FENCING_PANIC_REBOOT_SECONDS must be a whole number of seconds from 0 (leave kernel.panic alone) to 3600," \
    "got '$panic_reboot'"
fi
panic_reboot=$((10#$panic_reboot))

watchdog_class="$root/sys/class/watchdog"
softdog_module="$root/sys/module/softdog"
dev="$root/dev"
modules_load_conf="$root/etc/modules-load.d/fencing-softdog.conf"
modprobe_conf="$root/etc/modprobe.d/fencing-softdog.conf"
udev_rule="$root/etc/udev/rules.d/60-fencing-watchdog.rules"
panic_conf="$root/etc/sysctl.d/60-fencing-panic.conf"
kernel_panic="$root/proc/sys/kernel/panic"
options=(soft_margin="$margin" soft_panic=1 nowayout=0)

tmp=""
cleanup() {
  if [[ -n "$tmp" ]]; then
    rm -f -- "$tmp"
  fi
}
trap cleanup EXIT

# write_file PATH CONTENT: replaces PATH atomically (temp file in the same directory, rename) when its content
# differs; returns 0 when it wrote, 1 when the file already had this content.
write_file() {
  local path="$1" content="$2" dir
  if [[ -f "$path" && "$(cat -- "$path")" == "$content" ]]; then
    return 1
  fi
  dir="$(dirname -- "$path")"
  mkdir -p -- "$dir"
  tmp="$(mktemp -- "$dir/.fencing-softdog.XXXXXX")"
  printf '%s\n' "$content" >"$tmp"
  chmod 0644 -- "$tmp"
  mv -f -- "$tmp" "$path"
  tmp=""
  log "wrote $path"
  return 0
}

# The watchdog devices that are not softdog's, as "watchdogN (identity)".
hardware=()
for entry in "$watchdog_class"/watchdog*; do
  [[ -e "$entry" ]] || continue
  identity="$(cat -- "$entry/identity" 2>/dev/null || echo unknown)"
  if [[ "$identity" != "Software Watchdog" ]]; then
    hardware+=("$(basename -- "$entry") ($identity)")
  fi
done
# Without sysfs entries, a device node that is not softdog's still counts as a watchdog already present.
if ((${#hardware[@]} == 0)) && [[ ! -e "$watchdog_class" && -e "$dev/watchdog" && ! -e "$softdog_module" ]]; then
  hardware+=("$dev/watchdog (no sysfs entry)")
fi

if ((${#hardware[@]} > 0)); then
  log "a watchdog device is present: ${hardware[*]}; softdog is not needed, nothing to do"
  for file in "$modules_load_conf" "$modprobe_conf" "$udev_rule" "$panic_conf"; do
    if [[ -e "$file" ]]; then
      rm -f -- "$file"
      log "removed $file (written earlier, when this node had no hardware watchdog)"
    fi
  done
  exit 0
fi

write_file "$modules_load_conf" "softdog" || true
options_changed=0
write_file "$modprobe_conf" "options softdog ${options[*]}" && options_changed=1
write_file "$udev_rule" 'KERNEL=="watchdog*", OWNER="root", GROUP="root", MODE="0600"' || true

if [[ -e "$softdog_module" ]]; then
  if ((options_changed)); then
    log "softdog is already loaded: the new options (${options[*]}) apply at the next boot;" \
      "the module is not reloaded while the agent may hold the device"
  else
    log "softdog is already loaded"
  fi
else
  command -v modprobe >/dev/null 2>&1 || fail "modprobe is not installed; cannot load softdog"
  out="$(modprobe softdog "${options[@]}" 2>&1)" || fail "modprobe softdog ${options[*]} failed: $out"
  log "loaded softdog (${options[*]})"
fi

# devtmpfs creates the node while modprobe registers the device; allow udev a moment when it manages /dev.
for ((i = 0; i < 30; i++)); do
  [[ -e "$dev/watchdog" ]] && break
  sleep 0.1
done
[[ -e "$dev/watchdog" ]] || fail "softdog is loaded but $dev/watchdog did not appear within 3s"

devices=()
for node in "$dev/watchdog" "$dev"/watchdog[0-9]*; do
  [[ -e "$node" ]] && devices+=("$node")
done
chown root:root -- "${devices[@]}"
chmod 0600 -- "${devices[@]}"
log "${devices[*]}: root:root 0600 (only the fencing agent opens the watchdog)"

# A softdog expiry panics the kernel (soft_panic=1); kernel.panic = 0 would leave the node halted at the panic.
if ((panic_reboot == 0)); then
  log "FENCING_PANIC_REBOOT_SECONDS=0: kernel.panic is left as it is"
elif [[ ! -r "$kernel_panic" ]]; then
  log "WARNING: cannot read $kernel_panic; make sure kernel.panic is non-zero, or a softdog expiry halts the node"
else
  current="$(cat -- "$kernel_panic")"
  if [[ "$current" == 0 ]]; then
    write_file "$panic_conf" "kernel.panic = $panic_reboot" || true
    if printf '%s\n' "$panic_reboot" 2>/dev/null >"$kernel_panic"; then
      log "kernel.panic was 0 (a softdog expiry would halt the node): set to $panic_reboot s and persisted"
    else
      fail "kernel.panic is 0 and writing $panic_reboot to $kernel_panic failed: a softdog expiry would halt the node"
    fi
  else
    log "kernel.panic is $current: a softdog expiry reboots the node; left as it is"
  fi
fi
