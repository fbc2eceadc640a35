package dev.fencing.nodemanager.escalation;

/**
 * The datagram {@code fence_kdump_send} (ClusterLabs fence-agents) sends from a node's kdump kernel, every 10 s by
 * default, to UDP port 7410: 8 bytes, a 32-bit magic {@code 0x1B302A40} and a 32-bit version {@code 1}, in the
 * sender's byte order (little-endian on x86 and arm64, as captured from Debian's binary; big-endian accepted too).
 */
public final class KdumpMessage {

    /** The magic number. */
    static final int MAGIC = 0x1B302A40;
    /** The only version there is. */
    static final int VERSION = 1;
    /** Bytes in a message. */
    static final int LENGTH = 8;

    private KdumpMessage() {
    }

    /** Whether {@code data[0..length)} is a fence_kdump message; anything else (length, magic, version) is not. */
    public static boolean valid(byte[] data, int length) {
        if (length != LENGTH) {
            return false;
        }
        return (word(data, 0, false) == MAGIC && word(data, 4, false) == VERSION)
                || (word(data, 0, true) == MAGIC && word(data, 4, true) == VERSION);
    }

    private static int word(byte[] d, int at, boolean bigEndian) {
        int b0 = d[at] & 0xff;
        int b1 = d[at + 1] & 0xff;
        int b2 = d[at + 2] & 0xff;
        int b3 = d[at + 3] & 0xff;
        return bigEndian ? b0 << 24 | b1 << 16 | b2 << 8 | b3 : b3 << 24 | b2 << 16 | b1 << 8 | b0;
    }
}
