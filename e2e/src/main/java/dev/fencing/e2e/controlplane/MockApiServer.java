package dev.fencing.e2e.controlplane;

import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The lab's Kubernetes API: fabric8's {@link KubernetesMockServer} in CRUD mode bound on one address and port, with
 * the NodeGroup CRD created from the fencing-api jar ({@value #CRD_RESOURCE}). TokenReviews are answered by a
 * {@link LabTokenAuthority} for the agent tokens the lab issued ({@code agent-token} command).
 *
 * <p>Usage: {@code MockApiServer --address 198.18.0.2 --port 6443}. Stdout carries JSON lines only:
 * {@code {"event":"ready","url":…}} once it serves, then one answer per command read from stdin (see
 * {@link ApiCommands}). It stops when stdin closes, so it never outlives the JVM that started it.
 */
public final class MockApiServer {

    private static final Logger LOG = LoggerFactory.getLogger(MockApiServer.class);
    static final String CRD_RESOURCE = "/META-INF/fabric8/nodegroups.deckhouse.io-v1.yml";
    /** Commands are short; a longer line is a caller bug, not something to buffer without bound. */
    private static final int MAX_LINE_CHARS = 1 << 20;

    private MockApiServer() {
    }

    public static void main(String[] args) throws IOException {
        String address = null;
        int port = -1;
        for (int i = 0; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--address" -> address = args[i + 1];
                case "--port" -> port = parsePort(args[i + 1]);
                default -> usage("unknown option " + args[i]);
            }
        }
        if (address == null || port < 1 || port > 65535 || args.length % 2 != 0) {
            usage("both --address ADDR and --port 1..65535 are required");
        }
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        LabTokenAuthority tokens = new LabTokenAuthority();
        KubernetesMockServer server = new KubernetesMockServer(new Context(), new MockWebServer(), new HashMap<>(),
                tokens.dispatcher(new io.fabric8.kubernetes.client.utils.KubernetesSerialization()), false);
        server.init(InetAddress.getByName(address), port);
        try (KubernetesClient client = server.createClient()) {
            createNodeGroupCrd(client);
            String url = "http://" + address + ":" + port;
            LOG.info("event=mock-api-ready url={}", url);
            out.println("{\"event\":\"ready\",\"url\":\"" + url + "\"}");
            serveCommands(new ApiCommands(client, tokens), out);
        } finally {
            server.destroy();
            LOG.info("event=mock-api-stopped");
        }
    }

    private static void createNodeGroupCrd(KubernetesClient client) throws IOException {
        try (InputStream crd = MockApiServer.class.getResourceAsStream(CRD_RESOURCE)) {
            if (crd == null) {
                throw new IllegalStateException(CRD_RESOURCE + " is not on the classpath; it comes from the "
                        + "fencing-api jar (./mvnw -pl api install)");
            }
            client.apiextensions().v1().customResourceDefinitions()
                    .resource(client.getKubernetesSerialization().unmarshal(crd, CustomResourceDefinition.class))
                    .create();
        }
    }

    private static void serveCommands(ApiCommands commands, PrintStream out) throws IOException {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                if (line.isBlank()) {
                    continue;
                }
                String answer = line.length() > MAX_LINE_CHARS
                        ? ApiCommands.failed(null, "command longer than " + MAX_LINE_CHARS + " characters")
                        : commands.handle(line);
                out.println(answer);
            }
        }
    }

    private static int parsePort(String value) {
        try {
            return Integer.parseInt(value);
        } catch (NumberFormatException e) {
            usage("--port wants a number, got '" + value + "'");
            return -1;
        }
    }

    private static void usage(String problem) {
        System.err.println("MockApiServer: " + problem + "\nusage: MockApiServer --address ADDR --port PORT");
        System.exit(2);
    }
}
