package dev.fencing.policy;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Collection;
import java.util.HexFormat;
import java.util.TreeSet;

/**
 * A short, order-independent name for a group's expected member set: the first 16 bytes of SHA-256 over the sorted
 * node names, each followed by a line feed, in lower-case hex. An agent reports the digest of the set its quorum is
 * counted over ({@code AgentReport.expected_digest}); the controller computes the same digest for every set it
 * served, so it knows which majority a silent node could still be holding (ARCHITECTURE §7, safe-to-assume-fenced
 * across a membership change).
 */
public final class MemberSetDigest {
    private static final int BYTES = 16;

    private MemberSetDigest() {
    }

    /** The digest of {@code names} (duplicates count once; order does not matter). */
    public static String of(Collection<String> names) {
        MessageDigest sha;
        try {
            sha = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every Java runtime", e);
        }
        for (String name : new TreeSet<>(names)) {
            sha.update(name.getBytes(StandardCharsets.UTF_8));
            sha.update((byte) '\n');
        }
        byte[] full = sha.digest();
        return HexFormat.of().formatHex(full, 0, BYTES);
    }
}
