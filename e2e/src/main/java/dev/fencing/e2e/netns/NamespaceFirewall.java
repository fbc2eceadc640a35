package dev.fencing.e2e.netns;

import dev.fencing.e2e.process.CommandResult;
import dev.fencing.e2e.process.HostCommand;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The nftables table {@code inet fe2e} inside one network namespace of a lab: a node's, or another namespace
 * plugged into the lab's bridge (the control plane's). Faults are drop rules on its input hook: dropping at the
 * receiver looks exactly like packets lost on the wire, whereas an output drop would hand the sender an
 * {@code EPERM} that no real network produces.
 */
public final class NamespaceFirewall {

    private static final String TABLE = "fe2e";
    private static final Duration NFT_TIMEOUT = Duration.ofSeconds(10);
    private static final Pattern BYTES = Pattern.compile("bytes (\\d+)");
    private static final Pattern HANDLE = Pattern.compile("# handle (\\d+)");

    private final String namespace;

    /** @param namespace the network namespace the table lives in */
    public NamespaceFirewall(String namespace) {
        this.namespace = namespace;
    }

    /** Creates the table with accept-policy input and output chains. */
    public void install() {
        String script = "add table inet " + TABLE + "\n"
                + "add chain inet " + TABLE + " input { type filter hook input priority 0; policy accept; }\n"
                + "add chain inet " + TABLE + " output { type filter hook output priority 0; policy accept; }\n";
        HostCommand.check(nft("-f", "-"), script, NFT_TIMEOUT);
    }

    /**
     * Adds a rule to {@code chain} ("input" or "output").
     *
     * @param expression nft rule expression, e.g. {@code ip saddr { 198.18.0.11 } counter drop}
     * @return the rule's handle, for {@link #delete}
     */
    long add(String chain, String expression) {
        List<String> command = nft("--echo", "--handle", "add", "rule", "inet", TABLE, chain);
        command.addAll(List.of(expression.split(" ")));
        String out = HostCommand.check(command, NFT_TIMEOUT);
        Matcher m = HANDLE.matcher(out);
        if (!m.find()) {
            throw new IllegalStateException("nft did not echo a rule handle in " + namespace + ": " + out);
        }
        return Long.parseLong(m.group(1));
    }

    /** Deletes a rule; a rule already gone (flushed) is not an error. */
    void delete(String chain, long handle) {
        CommandResult result = HostCommand.run(nft("delete", "rule", "inet", TABLE, chain, "handle",
                String.valueOf(handle)), NFT_TIMEOUT);
        if (!result.ok() && !result.stderr().contains("No such file or directory")) {
            throw new IllegalStateException("nft delete rule " + handle + " in " + namespace + " failed: "
                    + result.stderr().strip());
        }
    }

    /**
     * @return the byte count of the counter in rule {@code handle} of {@code chain}
     * @throws IllegalStateException when the rule or its counter is gone
     */
    long counterBytes(String chain, long handle) {
        String listing = HostCommand.check(nft("-a", "list", "chain", "inet", TABLE, chain), NFT_TIMEOUT);
        for (String line : listing.split("\n")) {
            if (line.endsWith("# handle " + handle)) {
                Matcher m = BYTES.matcher(line);
                if (m.find()) {
                    return Long.parseLong(m.group(1));
                }
            }
        }
        throw new IllegalStateException("no counter rule " + handle + " in " + namespace + " " + chain);
    }

    /** Removes every fault rule in this namespace. */
    void flush() {
        HostCommand.check(nft("flush", "table", "inet", TABLE), NFT_TIMEOUT);
    }

    /** @return the current ruleset text of this namespace, for diagnostics */
    String ruleset() {
        return HostCommand.check(nft("list", "table", "inet", TABLE), NFT_TIMEOUT);
    }

    private List<String> nft(String... args) {
        List<String> command = new ArrayList<>(List.of("ip", "netns", "exec", namespace, "nft"));
        command.addAll(List.of(args));
        return command;
    }
}
