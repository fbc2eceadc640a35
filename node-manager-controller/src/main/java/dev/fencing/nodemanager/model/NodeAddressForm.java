package dev.fencing.nodemanager.model;

import java.net.InetAddress;
import java.net.UnknownHostException;

/**
 * One spelling per address: a Node's {@code status.addresses} entry as {@link InetAddress#getHostAddress()} spells
 * the source of a datagram (IPv6 has several textual forms), so the two compare as strings. Never a DNS lookup: a
 * host name stays as it is.
 */
public final class NodeAddressForm {

    private NodeAddressForm() {
    }

    /** {@code address} as {@link InetAddress#getHostAddress()} spells it; a host name unchanged. */
    public static String of(String address) {
        if (!address.matches("[0-9a-fA-F:.%]+")) {
            return address;
        }
        try {
            return InetAddress.getByName(address).getHostAddress();
        } catch (UnknownHostException e) {
            return address;
        }
    }
}
