package dev.fencing.nodemanager.health;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.probes.Probe;
import io.micrometer.core.instrument.Counter;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class HealthServerTest {

    private static final Probe OK = Optional::empty;

    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final HttpClient http = HttpClient.newHttpClient();
    private HealthServer server;

    @AfterEach
    void stop() {
        if (server != null) {
            server.close();
        }
    }

    private HttpResponse<String> send(String method, String path) throws IOException, InterruptedException {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path))
                .method(method, HttpRequest.BodyPublishers.noBody()).build();
        return http.send(request, HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void probesFollowTheirSuppliersAndMetricsServesTheRegistry() throws Exception {
        AtomicBoolean healthy = new AtomicBoolean(true);
        AtomicBoolean ready = new AtomicBoolean(false);
        Counter.builder("fencing.controller.test").register(registry).increment(2);
        server = new HealthServer(0, () -> healthy.get() ? Optional.empty() : Optional.of("informers not watching"),
                () -> ready.get() ? Optional.empty() : Optional.of("the operator has not started"), registry).start();

        assertThat(send("GET", "/healthz").body()).isEqualTo("ok\n");
        HttpResponse<String> notReady = send("GET", "/readyz");
        assertThat(notReady.statusCode()).isEqualTo(503);
        assertThat(notReady.body()).isEqualTo("not ready: the operator has not started\n");
        ready.set(true);
        healthy.set(false);
        assertThat(send("GET", "/readyz").statusCode()).isEqualTo(200);
        HttpResponse<String> unhealthy = send("GET", "/healthz");
        assertThat(unhealthy.statusCode()).isEqualTo(503);
        assertThat(unhealthy.body()).isEqualTo("unhealthy: informers not watching\n");
        HttpResponse<String> metrics = send("GET", "/metrics");
        assertThat(metrics.statusCode()).isEqualTo(200);
        assertThat(metrics.headers().firstValue("Content-Type"))
                .hasValue("text/plain; version=0.0.4; charset=utf-8");
        assertThat(metrics.body()).contains("fencing_controller_test_total 2.0");
    }

    @Test
    void groupViewsAnswerJsonNotFoundBadNameAndWrongMethod() throws Exception {
        server = new HealthServer(0, OK, OK, registry)
                .groupViews(name -> name.equals("workers") ? Optional.of("{\"group\":\"workers\"}") : Optional.empty())
                .start();

        HttpResponse<String> ok = send("GET", "/debug/groups/workers");
        assertThat(ok.statusCode()).isEqualTo(200);
        assertThat(ok.headers().firstValue("Content-Type")).hasValue("application/json");
        assertThat(ok.body()).isEqualTo("{\"group\":\"workers\"}");
        assertThat(send("GET", "/debug/groups/other").statusCode()).isEqualTo(404);
        HttpResponse<String> bad = send("GET", "/debug/groups/Bad_Name");
        assertThat(bad.statusCode()).isEqualTo(400);
        assertThat(bad.body()).contains("not a NodeGroup name");
        assertThat(send("POST", "/debug/groups/workers").statusCode()).isEqualTo(405);
    }

    @Test
    void withoutGroupViewsTheDebugPathAndUnknownPathsAreNotFound() throws Exception {
        server = new HealthServer(0, OK, OK, registry).start();

        assertThat(send("GET", "/debug/groups/workers").statusCode()).isEqualTo(404);
        assertThat(send("GET", "/nope").statusCode()).isEqualTo(404);
        assertThat(send("GET", "/").statusCode()).as("no landing page").isEqualTo(404);
    }

    @Test
    void busyPortFailsWithAMessageNamingItAndCloseStopsListening() throws Exception {
        server = new HealthServer(0, OK, OK, registry).start();
        int port = server.port();
        HealthServer second = new HealthServer(port, OK, OK, registry);

        assertThatThrownBy(second::start).isInstanceOf(IOException.class).hasMessageContaining("port " + port);
        assertThatThrownBy(() -> new HealthServer(70000, OK, OK, registry))
                .isInstanceOf(IllegalArgumentException.class);
        server.close();
        assertThat(server.port()).isEqualTo(-1);
        assertThatThrownBy(() -> http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/healthz"))
                .build(), HttpResponse.BodyHandlers.ofString())).isInstanceOf(IOException.class);
    }
}
