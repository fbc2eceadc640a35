package dev.fencing.nodemanager.escalation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.nio.file.Path;
import java.time.Instant;
import java.util.HexFormat;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The kdump listener against Debian's real {@code fence_kdump_send} on loopback, and against datagrams that are not. */
class KdumpListenerTest {

    static final String FENCE_KDUMP_SEND = "/usr/libexec/fence-agents/fence_kdump_send";

    private static Node node(String address) {
        return new NodeBuilder().withNewMetadata().withName("node-a").endMetadata().withNewStatus().addNewAddress()
                .withType("InternalIP").withAddress(address).endAddress().endStatus().build();
    }

    @Test
    void theCapturedMessageAndItsBigEndianFormAreValidAndNothingElseIs() {
        HexFormat hex = HexFormat.of();
        assertThat(KdumpMessage.valid(hex.parseHex("402a301b01000000"), 8)).isTrue();
        assertThat(KdumpMessage.valid(hex.parseHex("1b302a4000000001"), 8)).isTrue();
        assertThat(KdumpMessage.valid(hex.parseHex("402a301b0100000000"), 9)).isFalse();
        assertThat(KdumpMessage.valid(hex.parseHex("402a301b02000000"), 8)).as("version 2").isFalse();
        assertThat(KdumpMessage.valid(hex.parseHex("412a301b01000000"), 8)).as("magic").isFalse();
        assertThat(KdumpMessage.valid(hex.parseHex("402a301b"), 4)).isFalse();
    }

    @Test
    void messagesFromFenceKdumpSendAreRecordedForTheNodeWithTheSourceAddress() throws Exception {
        assertThat(Path.of(FENCE_KDUMP_SEND)).as("Debian fence-agents (scripts/test installs it)").exists();
        KdumpSightings sightings = new KdumpSightings();
        Instant at = Instant.parse("2026-11-23T10:00:00Z");
        try (KdumpListener listener = KdumpListener.start(InetAddress.getLoopbackAddress(), 0, sightings,
                () -> at, a -> a.isLoopbackAddress())) {
            Process send = new ProcessBuilder(FENCE_KDUMP_SEND, "-p", String.valueOf(listener.port()), "-c", "2",
                    "-i", "1", "127.0.0.1").redirectErrorStream(true).start();
            assertThat(send.waitFor(20, TimeUnit.SECONDS)).isTrue();
            await().atMost(10, TimeUnit.SECONDS).until(() -> listener.validMessages() == 2);

            assertThat(sightings.last(node("127.0.0.1"))).hasValue(at);
            assertThat(sightings.last(node("127.0.0.2"))).isEmpty();
            assertThat(listener.invalidMessages()).isZero();
            assertThat(listener.unmatchedMessages()).isZero();
        }
    }

    @Test
    void aValidMessageFromNoNodesAddressIsCountedApart() throws Exception {
        KdumpSightings sightings = new KdumpSightings();
        try (KdumpListener listener = KdumpListener.start(InetAddress.getLoopbackAddress(), 0, sightings,
                Instant::now, a -> false); DatagramSocket sender = new DatagramSocket()) {
            byte[] ok = HexFormat.of().parseHex("402a301b01000000");
            for (int i = 0; i < 3; i++) {
                sender.send(new DatagramPacket(ok, ok.length, InetAddress.getLoopbackAddress(), listener.port()));
            }
            await().atMost(10, TimeUnit.SECONDS).until(() -> listener.unmatchedMessages() == 3);
            assertThat(listener.validMessages()).isEqualTo(3);
            assertThat(listener.invalidMessages()).isZero();
        }
    }

    @Test
    void aDatagramThatIsNotAMessageIsCountedAndRecordsNothing() throws Exception {
        KdumpSightings sightings = new KdumpSightings();
        try (KdumpListener listener = KdumpListener.start(InetAddress.getLoopbackAddress(), 0, sightings,
                Instant::now, a -> true); DatagramSocket sender = new DatagramSocket()) {
            byte[] junk = "not a kdump message".getBytes();
            sender.send(new DatagramPacket(junk, junk.length, InetAddress.getLoopbackAddress(), listener.port()));
            await().atMost(10, TimeUnit.SECONDS).until(() -> listener.invalidMessages() == 1);

            assertThat(sightings.last(node("127.0.0.1"))).isEmpty();
            byte[] ok = HexFormat.of().parseHex("402a301b01000000");
            sender.send(new DatagramPacket(ok, ok.length, InetAddress.getLoopbackAddress(), listener.port()));
            await().atMost(10, TimeUnit.SECONDS).until(() -> listener.validMessages() == 1);
            assertThat(sightings.last(node("127.0.0.1"))).isPresent();
        }
    }
}
