package dev.fencing.policy;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Arrays;
import java.util.regex.Pattern;

/**
 * One gossip network of {@code spec.fencing.networks}: an IPv4 or IPv6 CIDR whose host bits are zero. Parsing never
 * resolves names: only address literals are accepted.
 *
 * @param text    the CIDR as written (the key of per-network maps on the wire and in node metadata)
 * @param network the network address bytes (4 or 16)
 * @param prefix  the prefix length
 */
public record NetworkCidr(String text, byte[] network, int prefix) {

    private static final Pattern IPV4 = Pattern.compile("(0|[1-9][0-9]{0,2})(\\.(0|[1-9][0-9]{0,2})){3}");
    private static final Pattern IPV6 = Pattern.compile("[0-9A-Fa-f:.]{2,45}");
    private static final Pattern PREFIX = Pattern.compile("0|[1-9][0-9]{0,2}");

    /** Copies the address bytes. */
    public NetworkCidr {
        network = network.clone();
    }

    /** The network address bytes (a copy). */
    @Override
    public byte[] network() {
        return network.clone();
    }

    /**
     * Parses {@code a.b.c.d/n} or {@code v6::/n}.
     *
     * @throws IllegalArgumentException saying what is wrong and how to write it
     */
    public static NetworkCidr parse(String text) {
        String hint = "; write a network such as 10.0.0.0/24 or fd00::/64";
        if (text == null || text.isBlank()) {
            throw new IllegalArgumentException("network CIDR is empty" + hint);
        }
        int slash = text.indexOf('/');
        if (slash < 0 || !PREFIX.matcher(text.substring(slash + 1)).matches()) {
            throw new IllegalArgumentException("'" + text + "' is not a CIDR (address/prefix length)" + hint);
        }
        byte[] address = literal(text.substring(0, slash));
        if (address == null) {
            throw new IllegalArgumentException("'" + text + "' does not start with an IPv4 or IPv6 address" + hint);
        }
        int prefix = Integer.parseInt(text.substring(slash + 1));
        if (prefix > address.length * 8) {
            throw new IllegalArgumentException("'" + text + "' has prefix length " + prefix + ", more than the "
                    + address.length * 8 + " bits of the address");
        }
        byte[] masked = mask(address, prefix);
        if (!Arrays.equals(masked, address)) {
            throw new IllegalArgumentException("'" + text + "' has host bits set; write the network address "
                    + format(masked) + "/" + prefix);
        }
        return new NetworkCidr(text, masked, prefix);
    }

    /** True when {@code address} lies inside this network (an address of the other family never does). */
    public boolean contains(InetAddress address) {
        byte[] bytes = address.getAddress();
        return bytes.length == network.length && Arrays.equals(mask(bytes, prefix), network);
    }

    /** True when the IP literal {@code ip} lies inside this network; false for anything that is not a literal. */
    public boolean containsLiteral(String ip) {
        byte[] bytes = ip == null ? null : literal(ip);
        return bytes != null && bytes.length == network.length && Arrays.equals(mask(bytes, prefix), network);
    }

    /** Same network and prefix, whatever the spelling (e.g. {@code fd00::/64} and {@code fd00:0::/64}). */
    public boolean sameNetwork(NetworkCidr other) {
        return prefix == other.prefix && Arrays.equals(network, other.network);
    }

    /** True when the two networks share an address (one contains the other's network address). */
    public boolean overlaps(NetworkCidr other) {
        if (network.length != other.network.length) {
            return false;
        }
        int shorter = Math.min(prefix, other.prefix);
        return Arrays.equals(mask(network, shorter), mask(other.network, shorter));
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof NetworkCidr other && text.equals(other.text) && sameNetwork(other);
    }

    @Override
    public int hashCode() {
        return text.hashCode();
    }

    @Override
    public String toString() {
        return text;
    }

    /** The address bytes of an IPv4 or IPv6 literal, or null when {@code ip} is not one (never a name lookup). */
    static byte[] literal(String ip) {
        try {
            if (IPV4.matcher(ip).matches()) {
                String[] parts = ip.split("\\.");
                byte[] out = new byte[4];
                for (int i = 0; i < 4; i++) {
                    int v = Integer.parseInt(parts[i]);
                    if (v > 255) {
                        return null;
                    }
                    out[i] = (byte) v;
                }
                return out;
            }
            // A literal with ':' is parsed as IPv6 by InetAddress without any lookup.
            if (ip.contains(":") && IPV6.matcher(ip).matches()) {
                byte[] out = InetAddress.getByName(ip).getAddress();
                return out.length == 16 ? out : null;
            }
        } catch (UnknownHostException | NumberFormatException e) {
            return null;
        }
        return null;
    }

    private static byte[] mask(byte[] address, int prefix) {
        byte[] out = address.clone();
        for (int bit = prefix; bit < out.length * 8; bit++) {
            out[bit / 8] &= (byte) ~(0x80 >>> (bit % 8));
        }
        return out;
    }

    private static String format(byte[] address) {
        try {
            return InetAddress.getByAddress(address).getHostAddress();
        } catch (UnknownHostException e) {
            throw new IllegalStateException("4 or 16 bytes always form an address", e);
        }
    }
}
