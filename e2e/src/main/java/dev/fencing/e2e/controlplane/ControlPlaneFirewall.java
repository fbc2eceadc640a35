package dev.fencing.e2e.controlplane;

import dev.fencing.e2e.netns.Fault;
import dev.fencing.e2e.process.CommandResult;
import dev.fencing.e2e.process.HostCommand;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * nftables inside the control-plane namespace: drops on its input hook make the API server and the controller
 * unreachable from chosen lab addresses, exactly like loss on the wire (the nodes' own firewalls are the lab's).
 */
final class ControlPlaneFirewall {

    private static final Logger LOG = LoggerFactory.getLogger(ControlPlaneFirewall.class);
    private static final String TABLE = "fe2ecp";
    private static final Duration NFT_TIMEOUT = Duration.ofSeconds(15);
    private static final Pattern HANDLE = Pattern.compile("# handle (\\d+)");

    private final String namespace;

    ControlPlaneFirewall(String namespace) {
        this.namespace = namespace;
    }

    /** Creates the table with an accept-policy input chain. */
    void install() {
        HostCommand.check(nft("-f", "-"), "add table inet " + TABLE + "\nadd chain inet " + TABLE
                + " input { type filter hook input priority 0; policy accept; }\n", NFT_TIMEOUT);
    }

    /** Drops every packet from {@code addresses}; the returned fault removes the rule again. */
    Fault dropFrom(String description, Collection<String> addresses) {
        String set = addresses.stream().sorted().collect(Collectors.joining(", "));
        List<String> add = nft("--echo", "--handle", "add", "rule", "inet", TABLE, "input");
        add.addAll(List.of("ip", "saddr", "{", set, "}", "counter", "drop"));
        String echoed = HostCommand.check(add, NFT_TIMEOUT);
        Matcher m = HANDLE.matcher(echoed);
        if (!m.find()) {
            throw new IllegalStateException("nft did not echo a rule handle in " + namespace + ": " + echoed);
        }
        String handle = m.group(1);
        LOG.info("event=fault-injected netns={} fault=\"{}\"", namespace, description);
        return new Fault() {
            private boolean healed;

            @Override
            public String description() {
                return description;
            }

            @Override
            public synchronized void heal() {
                if (healed) {
                    return;
                }
                healed = true;
                CommandResult result = HostCommand.run(nft("delete", "rule", "inet", TABLE, "input", "handle",
                        handle), NFT_TIMEOUT);
                if (!result.ok() && !result.stderr().contains("No such file or directory")) {
                    throw new IllegalStateException("nft delete rule " + handle + " in " + namespace + " failed: "
                            + result.stderr().strip());
                }
                LOG.info("event=fault-healed netns={} fault=\"{}\"", namespace, description);
            }
        };
    }

    private List<String> nft(String... args) {
        List<String> command = new ArrayList<>(List.of("ip", "netns", "exec", namespace, "nft"));
        command.addAll(List.of(args));
        return command;
    }
}
