package dev.fencing.e2e.stress;

import dev.fencing.memberlist.codec.Keyring;
import dev.fencing.memberlist.codec.MessageCodec;
import dev.fencing.memberlist.codec.PacketCodec;
import dev.fencing.memberlist.codec.PacketOptions;
import dev.fencing.memberlist.codec.StreamCodec;
import dev.fencing.memberlist.codec.UserMsg;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Hostile traffic against one gossip port, each attack bounded in count and time. The attacker knows the group label
 * (it is the group name, not a secret) and, for the bombs, the group key too: the worst case is an insider, since an
 * outsider's bombs are dropped at decryption before anything inflates.
 *
 * @param target the agent's gossip address (UDP and TCP)
 * @param label  the gossip label (the group name)
 * @param key    the group's gossip key
 */
record GossipAttacks(InetSocketAddress target, String label, byte[] key) {

    /** What an attack achieved against the target. */
    record Outcome(int attempts, int closedByTarget, long bytesSent, long millis) {
    }

    private static final int TWENTY_MIB = 20 << 20;

    /**
     * (a) Connections that announce a 20 MiB (every other one: 2 GiB) encrypted frame and then try to send 20 MiB,
     * one after another until {@code connections} were made or {@code maxMillis} passed.
     *
     * @return how many connections the target closed before taking the whole 20 MiB
     */
    Outcome hugeFrames(int connections, long maxMillis) {
        long start = System.nanoTime();
        byte[] chunk = new byte[256 << 10];
        int closed = 0;
        long sent = 0;
        int attempts = 0;
        for (int i = 0; i < connections && elapsedMillis(start) < maxMillis; i++) {
            attempts++;
            try (Socket s = new Socket()) {
                s.connect(target, 2000);
                s.setSoTimeout(2000);
                OutputStream out = s.getOutputStream();
                out.write(labelHeader());
                out.write(i % 2 == 0 ? new byte[] {10, 0x01, 0x40, 0x00, 0x00} : new byte[] {10, (byte) 0x80, 0, 0, 0});
                sent += 5;
                for (int written = 0; written < TWENTY_MIB; written += chunk.length) {
                    out.write(chunk);
                    sent += chunk.length;
                }
            } catch (IOException refused) {
                closed++;
            }
        }
        return new Outcome(attempts, closed, sent, elapsedMillis(start));
    }

    /**
     * (b) Slow connections: open {@code count} connections, each sending the label header and the header of a
     * modest 64 KiB encrypted frame, then one byte of its body every {@code trickleMillis} (a full frame would take
     * hours), until the target has closed every one of them or {@code maxMillis} passed.
     *
     * @return how many connections the target closed (all of them, unless it kept some past their deadline)
     */
    Outcome slowLoris(int count, long trickleMillis, long maxMillis) throws IOException, InterruptedException {
        long start = System.nanoTime();
        List<SocketChannel> open = new ArrayList<>();
        int closed = 0;
        long sent = 0;
        ByteBuffer one = ByteBuffer.allocate(1);
        ByteBuffer sink = ByteBuffer.allocate(512);
        try {
            for (int i = 0; i < count && elapsedMillis(start) < maxMillis; i++) {
                SocketChannel ch = SocketChannel.open();
                try {
                    ch.socket().connect(target, 2000);
                    ch.write(ByteBuffer.wrap(labelHeader()));
                    ch.write(ByteBuffer.wrap(new byte[] {10, 0, 1, 0, 0})); // [encrypt][64 KiB]
                    ch.configureBlocking(false);
                    open.add(ch);
                } catch (IOException refused) {
                    ch.close();
                    closed++;
                }
            }
            while (!open.isEmpty() && elapsedMillis(start) < maxMillis) {
                for (int i = open.size() - 1; i >= 0; i--) {
                    SocketChannel ch = open.get(i);
                    boolean gone;
                    try {
                        sink.clear();
                        gone = ch.read(sink) < 0;
                        if (!gone) {
                            one.clear();
                            sent += ch.write(one);
                        }
                    } catch (IOException reset) {
                        gone = true;
                    }
                    if (gone) {
                        ch.close();
                        open.remove(i);
                        closed++;
                    }
                }
                Thread.sleep(trickleMillis);
            }
            return new Outcome(closed + open.size(), closed, sent, elapsedMillis(start));
        } finally {
            for (SocketChannel ch : open) {
                ch.close();
            }
        }
    }

    /**
     * (c) LZW bombs: UDP packets holding a compressed compound of compressed 900 KiB user messages, and TCP streams
     * holding one compressed 16 MiB user message, all sealed with the group key and labelled.
     */
    Outcome lzwBombs(int packets, int streams, long maxMillis) {
        long start = System.nanoTime();
        PacketOptions keyed = new PacketOptions(new Keyring(key), label, true, true);
        PacketCodec plain = new PacketCodec(PacketOptions.plain());
        byte[] bomb = plain.encode(List.of(MessageCodec.encode(new UserMsg(new byte[900 << 10]))), false, true);
        byte[] compound = PacketCodec.compound(Collections.nCopies(6, bomb));
        byte[] packet = new PacketCodec(keyed).encode(List.of(compound), false, true);
        StreamCodec streamCodec = new StreamCodec(keyed);
        ByteArrayOutputStream stream = new ByteArrayOutputStream();
        try {
            streamCodec.writeLabelHeader(stream);
            streamCodec.write(stream, new UserMsg(new byte[16 << 20]), true);
        } catch (IOException e) {
            throw new IllegalStateException("an in-memory stream cannot fail", e);
        }
        byte[] streamBomb = stream.toByteArray();
        int attempts = 0;
        int closed = 0;
        long sent = 0;
        try (DatagramSocket udp = new DatagramSocket()) {
            for (int i = 0; i < packets && elapsedMillis(start) < maxMillis; i++) {
                udp.send(new DatagramPacket(packet, packet.length, target));
                sent += packet.length;
                attempts++;
                if (i % 50 == 49) {
                    Thread.sleep(20); // about 2000 bombs a second: a flood, not a kernel-buffer overflow test
                }
            }
        } catch (IOException | InterruptedException e) {
            throw new IllegalStateException("sending UDP bombs failed: " + e.getMessage(), e);
        }
        for (int i = 0; i < streams && elapsedMillis(start) < maxMillis; i++) {
            attempts++;
            try (Socket s = new Socket()) {
                s.connect(target, 2000);
                s.setSoTimeout(3000);
                s.getOutputStream().write(streamBomb);
                sent += streamBomb.length;
                if (s.getInputStream().read() < 0) {
                    closed++;
                }
            } catch (IOException reset) {
                closed++;
            }
        }
        return new Outcome(attempts, closed, sent, elapsedMillis(start));
    }

    /** The dialer's label header {@code [244][len][label]}. */
    private byte[] labelHeader() {
        byte[] l = label.getBytes(StandardCharsets.UTF_8);
        byte[] header = new byte[l.length + 2];
        header[0] = (byte) 244;
        header[1] = (byte) l.length;
        System.arraycopy(l, 0, header, 2, l.length);
        return header;
    }

    private static long elapsedMillis(long startNanos) {
        return (System.nanoTime() - startNanos) / 1_000_000;
    }
}
