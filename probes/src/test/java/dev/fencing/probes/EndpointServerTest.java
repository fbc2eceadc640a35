package dev.fencing.probes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.probes.EndpointServer.Response;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class EndpointServerTest {

    private EndpointServer server;
    private final List<Socket> clients = new ArrayList<>();

    @AfterEach
    void stop() throws IOException {
        for (Socket s : clients) {
            s.close();
        }
        if (server != null) {
            server.close();
        }
    }

    private EndpointServer start(EndpointServer.Builder b) throws IOException {
        server = b.address(InetAddress.getByName("127.0.0.1")).build();
        server.start();
        return server;
    }

    private String request(String raw) throws IOException {
        try (Socket s = new Socket("127.0.0.1", server.port())) {
            s.setSoTimeout(10_000);
            s.getOutputStream().write(raw.getBytes(StandardCharsets.US_ASCII));
            return new String(s.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    @Test
    void exactPathsPrefixesQueriesAndHeadersReachTheirEndpoint() throws Exception {
        AtomicReference<EndpointServer.Request> seen = new AtomicReference<>();
        start(EndpointServer.builder("test")
                .endpoint("/a", r -> {
                    seen.set(r);
                    return Response.text(200, "a\n");
                })
                .prefix("/items/", r -> Response.of(200, "application/json",
                        ("\"" + r.path().substring("/items/".length()) + "\"").getBytes(StandardCharsets.UTF_8))));

        assertThat(request("GET /a?x=1&y=2 HTTP/1.1\r\nAccept: one\r\naccept: two\r\nHost: h\r\n\r\n"))
                .startsWith("HTTP/1.1 200 OK\r\n").contains("Content-Length: 2\r\n").endsWith("\r\n\r\na\n");
        assertThat(seen.get().query()).isEqualTo("x=1&y=2");
        assertThat(seen.get().headers("ACCEPT")).containsExactly("one", "two");
        assertThat(seen.get().header("host")).isEqualTo("h");
        assertThat(request("GET /items/b HTTP/1.0\r\n\r\n")).contains("Content-Type: application/json")
                .endsWith("\"b\"");
        assertThat(request("HEAD /a HTTP/1.1\r\n\r\n")).contains("Content-Length: 2\r\n").endsWith("\r\n\r\n");
        assertThat(request("GET /b HTTP/1.1\r\n\r\n")).startsWith("HTTP/1.1 404 ")
                .endsWith("not found: try /a, /items/<name>\n");
        assertThat(request("PUT /a HTTP/1.1\r\n\r\n")).startsWith("HTTP/1.1 405 ").contains("Allow: GET, HEAD");
        assertThat(request("hello\r\n\r\n")).startsWith("HTTP/1.1 400 ");
        assertThat(server.answered()).isEqualTo(6);
    }

    @Test
    void aThrowingEndpointIsA500AndTheServerGoesOn() throws Exception {
        start(EndpointServer.builder("test")
                .endpoint("/boom", r -> {
                    throw new IllegalStateException("broken view");
                })
                .endpoint("/ok", r -> Response.text(200, "ok\n")));

        assertThat(request("GET /boom HTTP/1.1\r\n\r\n")).startsWith("HTTP/1.1 500 ").contains("broken view");
        assertThat(request("GET /ok HTTP/1.1\r\n\r\n")).startsWith("HTTP/1.1 200 ");
    }

    /**
     * A client that asked for a large answer and is slow to read it is not the one a flood of new connections closes:
     * the cap closes connections still without a request first, so the answer arrives whole.
     */
    @Test
    void aLargeAnswerBeingWrittenOutlivesAFloodOfSilentConnections() throws Exception {
        byte[] big = new byte[64 << 20]; // more than the kernel buffers of both ends hold
        Arrays.fill(big, (byte) 'x');
        start(EndpointServer.builder("test").maxConnections(4).timeout(Duration.ofSeconds(20))
                .endpoint("/big", r -> Response.of(200, "application/octet-stream", big)));
        Socket reader = new Socket("127.0.0.1", server.port());
        clients.add(reader);
        reader.getOutputStream().write("GET /big HTTP/1.1\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        InputStream in = reader.getInputStream();
        reader.setSoTimeout(10_000);
        int first = in.read(); // the answer has started: the connection is being written, not read
        for (int i = 0; i < 40; i++) {
            clients.add(new Socket("127.0.0.1", server.port()));
        }
        assertThat(request("GET /nope HTTP/1.1\r\n\r\n")).startsWith("HTTP/1.1 404 ");

        ByteArrayOutputStream all = new ByteArrayOutputStream();
        all.write(first);
        in.transferTo(all);
        String text = all.toString(StandardCharsets.ISO_8859_1);
        assertThat(text).startsWith("HTTP/1.1 200 ").contains("Content-Length: " + big.length);
        assertThat(all.size() - (text.indexOf("\r\n\r\n") + 4)).as("the whole body").isEqualTo(big.length);
        assertThat(server.dropped()).as("silent connections closed over the cap").isGreaterThanOrEqualTo(40 + 1 - 3);
    }

    @Test
    void aClientThatDoesNotReadItsAnswerIsClosedAtItsTimeout() throws Exception {
        byte[] big = new byte[64 << 20];
        start(EndpointServer.builder("test").timeout(Duration.ofMillis(1_500))
                .endpoint("/big", r -> Response.of(200, "application/octet-stream", big)));
        Socket idle = new Socket("127.0.0.1", server.port());
        clients.add(idle);
        idle.getOutputStream().write("GET /big HTTP/1.1\r\n\r\n".getBytes(StandardCharsets.US_ASCII));

        long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
        while (server.dropped() == 0 && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        assertThat(server.dropped()).isEqualTo(1);
        idle.setSoTimeout(10_000);
        Counter received = new Counter();
        try {
            idle.getInputStream().transferTo(received);
        } catch (IOException reset) {
            // closed with data unsent: a reset is as good as an early end
        }
        assertThat(received.count).as("the answer is cut off").isLessThan(big.length);
    }

    @Test
    void buildersRejectNonsense() {
        assertThatThrownBy(() -> EndpointServer.builder("Bad Name")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> EndpointServer.builder("x").port(65536)).hasMessageContaining("0..65535");
        assertThatThrownBy(() -> EndpointServer.builder("x").timeout(Duration.ZERO)).hasMessageContaining("positive");
        assertThatThrownBy(() -> EndpointServer.builder("x").maxConnections(0)).hasMessageContaining("at least 1");
        assertThatThrownBy(() -> EndpointServer.builder("x").endpoint("a", r -> null))
                .hasMessageContaining("starts with '/'");
        assertThatThrownBy(() -> EndpointServer.builder("x").prefix("/a", r -> null))
                .hasMessageContaining("ends with '/'");
        assertThatThrownBy(() -> EndpointServer.builder("x").build()).hasMessageContaining("no endpoint");
    }

    /** Counts what it is given. */
    private static final class Counter extends java.io.OutputStream {
        long count;

        @Override
        public void write(int b) {
            count++;
        }

        @Override
        public void write(byte[] b, int off, int len) {
            count += len;
        }
    }
}
