package dev.fencing.memberlist.node;

import dev.fencing.memberlist.Config;
import dev.fencing.memberlist.codec.Keyring;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

/**
 * The node's command line, parsed without a CLI library (the memberlist module stays dependency-free). Flag names
 * follow the Go interop peer's.
 *
 * @param config the memberlist configuration (delegates not yet set)
 * @param join peers to join ({@code host:port})
 * @param meta node metadata text
 * @param state push/pull state text
 * @param leaveTimeout how long a graceful leave waits for its broadcast
 */
record NodeOptions(Config config, List<String> join, String meta, String state, Duration leaveTimeout) {

  private static final String SKIP_INBOUND_LABEL_CHECK = "--skip-inbound-label-check";

  static final String USAGE =
      "usage: java -jar memberlist-node.jar --name NAME [--bind ADDR] [--port PORT] [--advertise ADDR]"
          + " [--join HOST:PORT[,HOST:PORT...]] [--key BASE64]... [--label LABEL] [--skip-inbound-label-check]"
          + " [--config lan|wan|local]"
          + " [--probe-interval D] [--probe-timeout D] [--gossip-interval D] [--push-pull-interval D]"
          + " [--gossip-to-the-dead-time D] [--tcp-timeout D] [--suspicion-mult N] [--suspicion-max-timeout-mult N]"
          + " [--retransmit-mult N] [--indirect-checks N] [--gossip-nodes N] [--awareness-max-multiplier N]"
          + " [--compression true|false] [--meta TEXT] [--state TEXT] [--leave-timeout D]";

  /** @throws IllegalArgumentException naming the offending flag */
  static NodeOptions parse(String[] args) {
    String name = null;
    String bind = "0.0.0.0";
    int port = 7946;
    String advertise = null;
    List<String> join = new ArrayList<>();
    List<byte[]> keys = new ArrayList<>();
    String label = "";
    boolean skipInboundLabelCheck = false;
    String base = "lan";
    String meta = "";
    String state = "";
    Duration leaveTimeout = Duration.ofSeconds(5);
    List<String[]> overrides = new ArrayList<>();
    for (int i = 0; i < args.length; i++) {
      String flag = args[i];
      String value;
      int eq = flag.indexOf('=');
      if (flag.equals(SKIP_INBOUND_LABEL_CHECK)) {
        // a bare boolean flag, as Go's flag package allows; "=true"/"=false" is handled below
        skipInboundLabelCheck = true;
        continue;
      }
      if (flag.startsWith("--") && eq > 0) {
        value = flag.substring(eq + 1);
        flag = flag.substring(0, eq);
      } else {
        if (i + 1 >= args.length) {
          throw new IllegalArgumentException(flag + " needs a value");
        }
        value = args[++i];
      }
      switch (flag) {
        case "--name" -> name = value;
        case "--bind" -> bind = value;
        case "--port" -> port = integer(flag, value);
        case "--advertise" -> advertise = value;
        case "--join" -> {
          for (String p : value.split(",")) {
            if (!p.isBlank()) {
              join.add(p.trim());
            }
          }
        }
        case "--key" -> keys.add(key(value));
        case "--label" -> label = value;
        case SKIP_INBOUND_LABEL_CHECK -> skipInboundLabelCheck = bool(flag, value);
        case "--config" -> base = value;
        case "--meta" -> meta = value;
        case "--state" -> state = value;
        case "--leave-timeout" -> leaveTimeout = duration(flag, value);
        case "--probe-interval", "--probe-timeout", "--gossip-interval", "--push-pull-interval",
            "--gossip-to-the-dead-time", "--tcp-timeout", "--suspicion-mult", "--suspicion-max-timeout-mult",
            "--retransmit-mult", "--indirect-checks", "--gossip-nodes", "--awareness-max-multiplier",
            "--compression" -> overrides.add(new String[] {flag, value});
        default -> throw new IllegalArgumentException("unknown option " + flag);
      }
    }
    if (name == null || name.isBlank()) {
      throw new IllegalArgumentException("--name is required");
    }
    if (meta.getBytes(StandardCharsets.UTF_8).length > Config.META_MAX_SIZE) {
      throw new IllegalArgumentException("--meta is longer than " + Config.META_MAX_SIZE + " bytes");
    }
    Config.Builder b =
        switch (base) {
          case "lan" -> Config.defaultLan().toBuilder();
          case "wan" -> Config.defaultWan().toBuilder();
          case "local" -> Config.defaultLocal().toBuilder();
          default -> throw new IllegalArgumentException("--config must be lan, wan or local, not " + base);
        };
    b.name(name).bindAddr(bind).bindPort(port).advertiseAddr(advertise).label(label)
        .skipInboundLabelCheck(skipInboundLabelCheck);
    if (!keys.isEmpty()) {
      b.keyring(new Keyring(keys.get(0), keys.subList(1, keys.size()).toArray(new byte[0][])));
    }
    for (String[] o : overrides) {
      apply(b, o[0], o[1]);
    }
    return new NodeOptions(b.build(), List.copyOf(join), meta, state, leaveTimeout);
  }

  private static void apply(Config.Builder b, String flag, String value) {
    switch (flag) {
      case "--probe-interval" -> b.probeInterval(duration(flag, value));
      case "--probe-timeout" -> b.probeTimeout(duration(flag, value));
      case "--gossip-interval" -> b.gossipInterval(duration(flag, value));
      case "--push-pull-interval" -> b.pushPullInterval(duration(flag, value));
      case "--gossip-to-the-dead-time" -> b.gossipToTheDeadTime(duration(flag, value));
      case "--tcp-timeout" -> b.tcpTimeout(duration(flag, value));
      case "--suspicion-mult" -> b.suspicionMult(integer(flag, value));
      case "--suspicion-max-timeout-mult" -> b.suspicionMaxTimeoutMult(integer(flag, value));
      case "--retransmit-mult" -> b.retransmitMult(integer(flag, value));
      case "--indirect-checks" -> b.indirectChecks(integer(flag, value));
      case "--gossip-nodes" -> b.gossipNodes(integer(flag, value));
      case "--awareness-max-multiplier" -> b.awarenessMaxMultiplier(integer(flag, value));
      case "--compression" -> b.enableCompression(bool(flag, value));
      default -> throw new IllegalArgumentException("unknown option " + flag);
    }
  }

  private static int integer(String flag, String value) {
    try {
      return Integer.parseInt(value);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(flag + " needs an integer, got \"" + value + "\"");
    }
  }

  private static boolean bool(String flag, String value) {
    return switch (value) {
      case "true" -> true;
      case "false" -> false;
      default -> throw new IllegalArgumentException(flag + " needs true or false, got \"" + value + "\"");
    };
  }

  private static Duration duration(String flag, String value) {
    try {
      return GoDuration.parse(value);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(flag + ": " + e.getMessage());
    }
  }

  private static byte[] key(String base64) {
    byte[] key;
    try {
      key = Base64.getDecoder().decode(base64);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("--key is not valid base64");
    }
    if (key.length != 16 && key.length != 24 && key.length != 32) {
      throw new IllegalArgumentException("--key must decode to 16, 24 or 32 bytes, got " + key.length);
    }
    return key;
  }
}
