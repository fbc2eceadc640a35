#!/usr/bin/env bats
# scripts/images: its argument handling, the canonical jar copy that makes the images independent of the order
# in which maven-shade-plugin writes entries, and the package closure of the fence-agents layer (a full build takes
# a few minutes: e2e's AgentImageIT/ControllerImageIT/FenceAgentsImageIT run it).

setup() {
  repo="$(cd "$BATS_TEST_DIRNAME/../.." && pwd)"
  work="$(mktemp -d)"
}

teardown() {
  rm -rf "$work"
}

# a jar with the given entry names, in that order, each entry's time given as y m d
make_jar() {
  python3 - "$@" <<'PY'
import sys, zipfile
out, year = sys.argv[1], int(sys.argv[2])
with zipfile.ZipFile(out, "w") as jar:
    for name in sys.argv[3:]:
        info = zipfile.ZipInfo(name, (year, 3, 4, 5, 6, 8))
        jar.writestr(info, b"" if name.endswith("/") else ("content of " + name).encode())
PY
}

@test "an unknown argument exits 2 and points at --help" {
  run "$repo/scripts/images" --no-such-flag
  [ "$status" -eq 2 ]
  [[ "$output" == *"unknown argument --no-such-flag (see --help)"* ]]
}

@test "--help prints the usage without building anything" {
  run "$repo/scripts/images" --help
  [ "$status" -eq 0 ]
  [[ "$output" == *"Usage: scripts/images [--build-jars] [--twice] [--out DIR]"* ]]
  [[ "$output" != *"set -euo"* ]]
}

@test "a missing JDK 25 is a clear error" {
  JDK25="$work/no-jdk" run "$repo/scripts/images" --out "$work/out"
  [ "$status" -eq 1 ]
  [[ "$output" == *"no JDK 25 with jlink at $work/no-jdk"* ]]
  [ ! -e "$work/out" ]
}

@test "the canonical copy of two jars with the same entries in other orders and times is the same file" {
  make_jar "$work/a.jar" 2020 META-INF/MANIFEST.MF b/ b/x.class META-INF/ META-INF/services/s1 META-INF/services/s2
  make_jar "$work/b.jar" 2024 META-INF/ META-INF/services/s2 b/ META-INF/services/s1 META-INF/MANIFEST.MF b/x.class
  # shellcheck source=/dev/null
  source <(sed -n '/^canonical_jar() {/,/^}/p' "$repo/scripts/images")
  SOURCE_DATE_EPOCH=1767225600 canonical_jar "$work/a.jar" "$work/a-canonical.jar"
  SOURCE_DATE_EPOCH=1767225600 canonical_jar "$work/b.jar" "$work/b-canonical.jar"
  cmp "$work/a-canonical.jar" "$work/b-canonical.jar"
  run unzip -Z1 "$work/a-canonical.jar"
  [ "$output" = "$(printf '%s\n' META-INF/ META-INF/MANIFEST.MF META-INF/services/s1 META-INF/services/s2 b/ b/x.class)" ]
  run unzip -p "$work/b-canonical.jar" META-INF/services/s2
  [ "$output" = "content of META-INF/services/s2" ]
}

# the functions and package lists fence_closure uses, from the script
fence_functions() {
  sed -n -e '/^die() {/p' -e '/^base_packages=/p' -e '/^fence_roots=/,/^fence_provided=/p' \
    -e '/^fence_closure() {/,/^}/p' "$repo/scripts/images"
}

@test "the fence-agents closure is what apt adds to the base for python3, pexpect, pycurl and ipmitool, nothing declared" {
  command -v apt-get >/dev/null || skip "no apt"
  apt-cache show --no-all-versions ipmitool >/dev/null 2>&1 || skip "apt has no package lists"
  # shellcheck source=/dev/null
  source <(fence_functions)
  cd "$work"
  # a relative scratch directory: apt would read it below /var/lib/apt
  run fence_closure scratch
  [ "$status" -eq 0 ]
  for pkg in python3 python3.11-minimal libpython3.11-stdlib python3-pexpect python3-ptyprocess python3-pycurl \
    libcurl3-gnutls ipmitool libfreeipmi17; do
    [[ $'\n'"$output"$'\n' == *$'\n'"$pkg"$'\n'* ]] || { echo "missing $pkg in: $output"; false; }
  done
  for pkg in libc6 zlib1g dpkg init-system-helpers media-types perl-base tar fence-agents python3-boto3; do
    [[ $'\n'"$output"$'\n' != *$'\n'"$pkg"$'\n'* ]] || { echo "unexpected $pkg in: $output"; false; }
  done
  [ "$output" = "$(sort <<<"$output")" ]
}
