package dev.fencing.probes;

import io.prometheus.metrics.exporter.common.PrometheusHttpExchange;
import io.prometheus.metrics.exporter.common.PrometheusHttpRequest;
import io.prometheus.metrics.exporter.common.PrometheusHttpResponse;
import io.prometheus.metrics.exporter.common.PrometheusScrapeHandler;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.util.Collections;
import java.util.Enumeration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * {@code /metrics} as an {@link EndpointServer.Endpoint}: the Prometheus client's own scrape handler (text format,
 * OpenMetrics or protobuf as the scraper's {@code Accept} asks, gzip when its {@code Accept-Encoding} allows,
 * {@code name[]} filters and {@code ?debug=}), its answer collected in memory and handed to the server, which writes it
 * without blocking. A scrape runs on the server's thread and reads the registry's meters, which answer from memory.
 */
public final class PrometheusEndpoint implements EndpointServer.Endpoint {

    private final PrometheusScrapeHandler handler;

    /** Scrapes {@code registry} on every request. */
    public PrometheusEndpoint(PrometheusRegistry registry) {
        this.handler = new PrometheusScrapeHandler(registry);
    }

    /**
     * What a metrics port serves: {@code /metrics} (this endpoint on {@code registry}), {@code /healthz} and
     * {@code /readyz} ({@link ProbeServer#probe}) and {@code /-/healthy} (200 "ok" while the listener serves at all,
     * as the Prometheus client's server answered).
     */
    public static EndpointServer.Builder metricsAndProbes(EndpointServer.Builder builder, PrometheusRegistry registry,
            Probe liveness, Probe readiness) {
        return builder
                .endpoint("/metrics", new PrometheusEndpoint(registry))
                .endpoint("/healthz", ProbeServer.probe(liveness, "unhealthy", "liveness"))
                .endpoint("/readyz", ProbeServer.probe(readiness, "not ready", "readiness"))
                .endpoint("/-/healthy", request -> EndpointServer.Response.text(200, "ok\n"));
    }

    @Override
    public EndpointServer.Response answer(EndpointServer.Request request) throws IOException {
        Exchange exchange = new Exchange(request);
        handler.handleRequest(exchange);
        if (exchange.failure != null) {
            throw exchange.failure;
        }
        if (exchange.status < 0) {
            throw new IOException("the Prometheus scrape handler sent no answer");
        }
        return new EndpointServer.Response(exchange.status, exchange.headers, exchange.body.toByteArray());
    }

    /** The client's view of one request, and what it answers. */
    private static final class Exchange implements PrometheusHttpExchange, PrometheusHttpRequest,
            PrometheusHttpResponse {

        private final EndpointServer.Request request;
        private final Map<String, String> headers = new LinkedHashMap<>();
        private final ByteArrayOutputStream body = new ByteArrayOutputStream();
        private int status = -1;
        private IOException failure;

        Exchange(EndpointServer.Request request) {
            this.request = request;
        }

        @Override
        public PrometheusHttpRequest getRequest() {
            return this;
        }

        @Override
        public PrometheusHttpResponse getResponse() {
            return this;
        }

        @Override
        public void handleException(IOException e) {
            failure = e;
        }

        @Override
        public void handleException(RuntimeException e) {
            throw e; // the server answers 500 with it
        }

        @Override
        public void close() {
            // nothing held: the answer is in memory
        }

        @Override
        public String getQueryString() {
            return request.query().isEmpty() ? null : request.query();
        }

        @Override
        public Enumeration<String> getHeaders(String name) {
            return Collections.enumeration(request.headers(name));
        }

        @Override
        public String getMethod() {
            // HEAD is answered as GET and the server leaves the body out, so Content-Length is the GET's
            return "GET";
        }

        @Override
        public String getRequestPath() {
            return request.path();
        }

        @Override
        public void setHeader(String name, String value) {
            if (!name.equalsIgnoreCase("Content-Length")) { // the server counts the body itself
                headers.put(name, value);
            }
        }

        @Override
        public OutputStream sendHeadersAndGetBody(int statusCode, int contentLength) {
            status = statusCode;
            return body;
        }
    }
}
