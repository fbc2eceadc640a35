package dev.fencing.agent.status;

import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * The fields of the host status file, in the order they are written. Readers must ignore keys they do not know, so
 * keys may be added (at the end) without a version bump; {@value #VERSION} changes only when a key changes meaning.
 *
 * @param node this node's name
 * @param group the group of the config in effect, empty when none
 * @param pid the agent's process id
 * @param armed the watchdog is open (feeding, or starving while fencing)
 * @param reasons disarm reason kinds as in the status RPC without the {@code KIND_} prefix (e.g.
 *     {@code DISABLE_FILE}); empty when armed
 * @param disableFilePresent the quorum loop has taken the disable file into account
 * @param quorum quorum at the latest evaluation
 * @param revision the controller config revision in effect, 0 when none
 */
public record HostStatus(String node, String group, long pid, boolean armed, List<String> reasons,
    boolean disableFilePresent, Quorum quorum, long revision) {

  /** Format version, the {@code version=} line. */
  public static final int VERSION = 1;

  /** Quorum as the file states it. */
  public enum Quorum { HELD, LOST, UNKNOWN }

  public HostStatus {
    Objects.requireNonNull(node, "node");
    Objects.requireNonNull(group, "group");
    Objects.requireNonNull(quorum, "quorum");
    reasons = List.copyOf(reasons);
  }

  // Written out rather than the generated record equals: the quorum loop compares its status with the last one after
  // every tick, and the generated method's method-handle chain is several times slower without C2.
  @Override
  public boolean equals(Object o) {
    return o instanceof HostStatus h && pid == h.pid && armed == h.armed && disableFilePresent == h.disableFilePresent
        && revision == h.revision && quorum == h.quorum && node.equals(h.node) && group.equals(h.group)
        && reasons.equals(h.reasons);
  }

  @Override
  public int hashCode() {
    return Objects.hash(node, group, pid, armed, reasons, disableFilePresent, quorum, revision);
  }

  /** The file's content, ASCII, with {@code updated_unix} set to {@code updatedUnixSeconds}. */
  public String render(long updatedUnixSeconds) {
    return "# fencing-agent status (informational; replaced atomically)\n"
        + "version=" + VERSION + "\n"
        + "node=" + ascii(node) + "\n"
        + "group=" + ascii(group) + "\n"
        + "pid=" + pid + "\n"
        + "armed=" + armed + "\n"
        + "reasons=" + (reasons.isEmpty() ? "none" : ascii(String.join(",", reasons))) + "\n"
        + "disable_file=" + (disableFilePresent ? "present" : "absent") + "\n"
        + "quorum=" + quorum.name().toLowerCase(Locale.ROOT) + "\n"
        + "revision=" + revision + "\n"
        + "updated_unix=" + updatedUnixSeconds + "\n";
  }

  /** Node and group names are DNS labels; anything else (a line break above all) must not forge a key. */
  private static String ascii(String value) {
    StringBuilder out = new StringBuilder(value.length());
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      out.append(c >= 0x21 && c <= 0x7e ? c : '?');
    }
    return out.toString();
  }
}
