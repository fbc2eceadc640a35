package dev.fencing.e2e.netns;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.TreeMap;

/**
 * A tiny UDP endpoint run inside a lab namespace by the harness tests. It answers every "ping" with a "pong",
 * counts pings and pongs per source address, and on stdin accepts {@code {"send":"ip:port","count":N}} (send N
 * pings, at most 5000, 1 ms apart) and {@code {"report":true}} (print the counters as one JSON line).
 */
public final class UdpProbe {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int MAX_COUNT = 5000;

    private final DatagramSocket socket;
    private final Map<String, Integer> pings = new TreeMap<>();
    private final Map<String, Integer> pongs = new TreeMap<>();

    private UdpProbe(DatagramSocket socket) {
        this.socket = socket;
    }

    public static void main(String[] args) throws IOException {
        if (args.length != 2) {
            System.err.println("usage: UdpProbe BIND_ADDRESS PORT");
            System.exit(2);
        }
        DatagramSocket socket = new DatagramSocket(new InetSocketAddress(InetAddress.getByName(args[0]),
                Integer.parseInt(args[1])));
        UdpProbe probe = new UdpProbe(socket);
        Thread receiver = new Thread(probe::receive, "udp-probe-receive");
        receiver.setDaemon(true);
        receiver.start();
        ObjectNode ready = JSON.createObjectNode();
        ready.put("event", "ready");
        ready.put("addr", args[0] + ":" + args[1]);
        print(ready);
        probe.commands();
    }

    private void receive() {
        byte[] buffer = new byte[512];
        while (true) {
            DatagramPacket packet = new DatagramPacket(buffer, buffer.length);
            try {
                socket.receive(packet);
                String text = new String(packet.getData(), 0, packet.getLength(), StandardCharsets.US_ASCII);
                String source = packet.getAddress().getHostAddress();
                if (text.startsWith("ping ")) {
                    count(pings, source);
                    byte[] reply = ("pong " + text.substring(5)).getBytes(StandardCharsets.US_ASCII);
                    socket.send(new DatagramPacket(reply, reply.length, packet.getSocketAddress()));
                } else if (text.startsWith("pong ")) {
                    count(pongs, source);
                }
            } catch (IOException e) {
                System.err.println("udp-probe: receive/send failed: " + e.getMessage());
            }
        }
    }

    private void count(Map<String, Integer> counters, String source) {
        synchronized (this) {
            counters.merge(source, 1, Integer::sum);
        }
    }

    private void commands() throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            JsonNode command;
            try {
                command = JSON.readTree(line);
            } catch (IOException e) {
                System.err.println("udp-probe: bad command line: " + line);
                continue;
            }
            if (command.has("send")) {
                send(command.path("send").asText(), Math.min(MAX_COUNT, command.path("count").asInt(1)));
            } else if (command.path("report").asBoolean(false)) {
                report();
            }
        }
    }

    private void send(String target, int count) {
        String[] hostPort = target.split(":");
        int sent = 0;
        int failed = 0;
        try {
            InetSocketAddress to = new InetSocketAddress(InetAddress.getByName(hostPort[0]),
                    Integer.parseInt(hostPort[1]));
            for (int seq = 0; seq < count; seq++) {
                byte[] data = ("ping " + seq).getBytes(StandardCharsets.US_ASCII);
                try {
                    socket.send(new DatagramPacket(data, data.length, to));
                    sent++;
                } catch (IOException e) {
                    failed++;
                }
                Thread.sleep(1);
            }
            // let the last pongs come back before announcing completion
            Thread.sleep(300);
        } catch (IOException | RuntimeException e) {
            System.err.println("udp-probe: bad target " + target + ": " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        ObjectNode done = JSON.createObjectNode();
        done.put("event", "sent");
        done.put("to", target);
        done.put("sent", sent);
        done.put("failed", failed);
        print(done);
    }

    private void report() {
        ObjectNode report = JSON.createObjectNode();
        report.put("event", "report");
        synchronized (this) {
            report.set("pings", JSON.valueToTree(pings));
            report.set("pongs", JSON.valueToTree(pongs));
        }
        print(report);
    }

    private static synchronized void print(JsonNode node) {
        System.out.println(node.toString());
        System.out.flush();
    }
}
