package dev.fencing.nodemanager.escalation;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

/**
 * A directory of fake fence agents for tests: shell scripts that speak the fence agents' stdin protocol against a
 * power-state file ({@code <dir>/<plug>.power}, "on" or "off"), record every stdin they got
 * ({@code <dir>/<agent>.log}), and print the password they were given (so tests can see it is redacted).
 */
final class FakeFenceAgents {

    private final Path dir;

    FakeFenceAgents(Path dir) {
        this.dir = dir;
    }

    Path dir() {
        return dir;
    }

    /**
     * A working agent: {@code status} exits 0 (on) or 2 (off) from the state file of {@code plug=}; {@code off} and
     * {@code on} write it. A {@code password} other than {@code expectedPassword} fails every action with exit 1.
     */
    FakeFenceAgents working(String name, String expectedPassword) throws IOException {
        return script(name, """
                #!/bin/sh
                action=""; plug=""; password=""
                while IFS= read -r line; do
                  echo "$line" >> "%1$s/%2$s.log"
                  case "$line" in
                    action=*) action="${line#action=}" ;;
                    plug=*) plug="${line#plug=}" ;;
                    password=*) password="${line#password=}" ;;
                  esac
                done
                echo "--" >> "%1$s/%2$s.log"
                echo "connecting with password $password"
                if [ "$password" != "%3$s" ]; then echo "Failed: Unable to obtain correct plug status"; exit 1; fi
                state="%1$s/$plug.power"
                [ -f "$state" ] || echo on > "$state"
                case "$action" in
                  status) if [ "$(cat "$state")" = on ]; then echo "Status: ON"; exit 0; else echo "Status: OFF"; exit 2; fi ;;
                  off) echo off > "$state"; echo "Success: Powered OFF"; exit 0 ;;
                  on) echo on > "$state"; echo "Success: Powered ON"; exit 0 ;;
                  *) echo "unknown action $action"; exit 1 ;;
                esac
                """.formatted(dir, name, expectedPassword));
    }

    /** An agent that never answers (a BMC that does not respond): it sleeps far beyond any test timeout. */
    FakeFenceAgents hanging(String name) throws IOException {
        return script(name, "#!/bin/sh\ncat > /dev/null\nexec sleep 600\n");
    }

    String power(String plug) throws IOException {
        Path state = dir.resolve(plug + ".power");
        return Files.exists(state) ? Files.readString(state).strip() : "on";
    }

    String log(String agent) throws IOException {
        Path log = dir.resolve(agent + ".log");
        return Files.exists(log) ? Files.readString(log) : "";
    }

    private FakeFenceAgents script(String name, String body) throws IOException {
        Path file = dir.resolve(name);
        Files.writeString(file, body);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwxr-xr-x"));
        return this;
    }
}
