package dev.fencing.probes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class ProbeServerTest {

    private static final Probe OK = Optional::empty;
    private EndpointServer probes;
    private final List<Socket> clients = new ArrayList<>();

    @AfterEach
    void stop() throws IOException {
        for (Socket s : clients) {
            s.close();
        }
        if (probes != null) {
            probes.close();
        }
    }

    private EndpointServer start(Probe liveness, Probe readiness) throws IOException {
        probes = ProbeServer.create(InetAddress.getByName("127.0.0.1"), 0, liveness, readiness);
        probes.start();
        return probes;
    }

    private static String request(int port, String raw) throws IOException {
        try (Socket s = new Socket("127.0.0.1", port)) {
            s.setSoTimeout(10_000);
            s.getOutputStream().write(raw.getBytes(StandardCharsets.US_ASCII));
            return new String(s.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    private Socket client(String sent) throws IOException {
        Socket s = new Socket("127.0.0.1", probes.port());
        clients.add(s);
        s.getOutputStream().write(sent.getBytes(StandardCharsets.US_ASCII));
        return s;
    }

    @Test
    void healthzAndReadyzAnswerWithTheProbesVerdict() throws Exception {
        AtomicReference<Optional<String>> ready = new AtomicReference<>(Optional.of("quorum not held"));
        start(OK, ready::get);
        String live = request(probes.port(),
                "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:9653\r\nUser-Agent: kube-probe/1.31\r\n\r\n");
        assertThat(live).startsWith("HTTP/1.1 200 OK\r\n").contains("Content-Length: 3\r\n")
                .contains("Connection: close\r\n").endsWith("\r\n\r\nok\n");
        assertThat(request(probes.port(), "GET /readyz HTTP/1.1\r\n\r\n")).startsWith("HTTP/1.1 503 ")
                .endsWith("not ready: quorum not held\n");
        ready.set(Optional.empty());
        assertThat(request(probes.port(), "GET /readyz?verbose HTTP/1.1\r\n\r\n")).startsWith("HTTP/1.1 200 ");
        assertThat(request(probes.port(), "HEAD /healthz HTTP/1.1\r\n\r\n")).startsWith("HTTP/1.1 200 ")
                .contains("Content-Length: 3\r\n").endsWith("\r\n\r\n");
        assertThat(request(probes.port(), "GET /metrics HTTP/1.1\r\n\r\n")).startsWith("HTTP/1.1 404 ");
        assertThat(request(probes.port(), "POST /healthz HTTP/1.1\r\n\r\n")).startsWith("HTTP/1.1 405 ");
        assertThat(request(probes.port(), "garbage\r\n\r\n")).startsWith("HTTP/1.1 400 ");
        assertThat(request(probes.port(), "GET  /healthz HTTP/1.1\r\n\r\n")).startsWith("HTTP/1.1 400 ");
        assertThat(request(probes.port(), "GET /healthz HTTP/1.1\r\nX: " + "y".repeat(5_000) + "\r\n\r\n"))
                .startsWith("HTTP/1.1 400 ").endsWith("request head longer than 4096 bytes\n");
        assertThat(probes.answered()).isEqualTo(9);
        assertThat(probes.dropped()).isZero();
    }

    @Test
    void aRequestArrivingInPiecesIsAnswered() throws Exception {
        start(OK, OK);
        Socket s = client("GET /heal");
        s.setSoTimeout(10_000);
        Thread.sleep(50);
        s.getOutputStream().write("thz HTTP/1.1\r\n\r".getBytes(StandardCharsets.US_ASCII));
        Thread.sleep(50);
        s.getOutputStream().write("\n".getBytes(StandardCharsets.US_ASCII));
        assertThat(new String(s.getInputStream().readAllBytes(), StandardCharsets.UTF_8)).startsWith("HTTP/1.1 200 ");
    }

    @Test
    void aThrowingProbeIsA503() throws Exception {
        start(() -> {
            throw new IllegalStateException("boom");
        }, OK);
        assertThat(request(probes.port(), "GET /healthz HTTP/1.1\r\n\r\n")).startsWith("HTTP/1.1 503 ")
                .contains("unhealthy: probe failed: java.lang.IllegalStateException: boom");
    }

    /**
     * A hundred silent clients and a hundred that send half a request: the probe is still answered, at most
     * {@value ProbeServer#MAX_CONNECTIONS} stay open (the oldest go first), and those left are closed once their
     * time is up.
     */
    @Test
    void clientsThatHoldConnectionsNeverKeepTheProbeFromBeingAnswered() throws Exception {
        start(OK, OK);
        for (int i = 0; i < 100; i++) {
            client("");
            client("GET /healthz HTTP/1.1\r\n");
        }
        assertThat(request(probes.port(), "GET /healthz HTTP/1.1\r\n\r\n")).startsWith("HTTP/1.1 200 ");
        // accepted in order, so every holder was accepted before the probe: the cap closed all but the newest at once
        assertThat(probes.dropped()).isGreaterThanOrEqualTo(200 + 1 - ProbeServer.MAX_CONNECTIONS);
        // the newest holder is closed by the server once its time is up: end of stream, no answer
        Socket last = clients.get(clients.size() - 1);
        last.setSoTimeout(ProbeServer.TIMEOUT_MILLIS + 10_000);
        assertThat(last.getInputStream().read()).isEqualTo(-1);
        assertThat(probes.dropped()).as("every holder, by the cap or the timeout").isEqualTo(200);
        // and the oldest, closed when the cap was reached, read the end of the stream too
        try (InputStream first = clients.get(0).getInputStream()) {
            clients.get(0).setSoTimeout(1_000);
            assertThat(first.read()).isEqualTo(-1);
        }
        assertThat(request(probes.port(), "GET /readyz HTTP/1.1\r\n\r\n")).startsWith("HTTP/1.1 200 ");
    }

    @Test
    void itListensOnItsAddressOnlyAndABusyPortIsNamed() throws Exception {
        start(OK, OK);
        // Every 127/8 address reaches lo; a socket bound to 127.0.0.1 alone does not answer on 127.0.0.2.
        assertThatThrownBy(() -> new Socket("127.0.0.2", probes.port()).close()).isInstanceOf(ConnectException.class);
        EndpointServer second = ProbeServer.create(InetAddress.getByName("127.0.0.1"), probes.port(), OK, OK);
        assertThatThrownBy(second::start).isInstanceOf(IOException.class)
                .hasMessageContaining("cannot listen for probe requests on 127.0.0.1 port " + probes.port());
        assertThatThrownBy(() -> ProbeServer.create(null, 65_536, OK, OK)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("probe port must be 0..65535, got 65536");
    }

    @Test
    void withoutAnAddressItListensOnEveryAddress() throws Exception {
        probes = ProbeServer.create(null, 0, OK, OK);
        probes.start();
        try (Socket s = new Socket("127.0.0.2", probes.port())) {
            s.setSoTimeout(10_000);
            s.getOutputStream().write("GET /healthz HTTP/1.1\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            assertThat(new String(s.getInputStream().readAllBytes(), StandardCharsets.UTF_8))
                    .startsWith("HTTP/1.1 200 ");
        }
    }

    @Test
    void aClosedServerFreesItsPortAndClosesItsConnections() throws Exception {
        start(OK, OK);
        int port = probes.port();
        Socket holder = client("GET /");
        holder.setSoTimeout(10_000);
        // connections are accepted in order: once a later one is answered, the holder is accepted too
        assertThat(request(port, "GET /healthz HTTP/1.1\r\n\r\n")).startsWith("HTTP/1.1 200 ");
        probes.close();
        assertThat(probes.port()).isEqualTo(-1);
        assertThat(holder.getInputStream().read()).isEqualTo(-1);
        // A listener still bound would make this bind fail. (Dialling the closed port proves nothing: another test
        // may bind it by then, and Linux can connect a socket to itself on a free ephemeral port.)
        try (ServerSocket again = new ServerSocket()) {
            again.bind(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), port));
            assertThat(again.getLocalPort()).isEqualTo(port);
        }
    }
}
