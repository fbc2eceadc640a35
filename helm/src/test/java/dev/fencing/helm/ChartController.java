package dev.fencing.helm;

import dev.fencing.kubetest.RealControlPlane;
import dev.fencing.nodemanager.NodeManager;
import dev.fencing.nodemanager.NodeManagerOperator;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import picocli.CommandLine;

/**
 * The real controller ({@link NodeManager}) in the test JVM, as the chart deploys it: the command line of the
 * installed Deployment's container (parsed by {@link NodeManagerOperator}'s own options), the TLS Secret's files as
 * its volume would mount them, and a token of the chart's ServiceAccount (TokenRequest) as its only credential. Only
 * what a pod has and a test process has not is changed: ports (any free one, no health server) and the address other
 * replicas reach it on.
 */
final class ChartController implements AutoCloseable {

    private final ApiResponses responses = new ApiResponses();
    private final KubernetesClient client;
    private final NodeManager manager;
    private final List<String> args;

    private ChartController(RealControlPlane kube, String namespace, String fullname, Path tlsDir) {
        KubernetesClient admin = kube.adminClient();
        Deployment deployment = admin.apps().deployments().inNamespace(namespace).withName(fullname).get();
        Container container = deployment.getSpec().getTemplate().getSpec().getContainers().get(0);
        String serviceAccount = deployment.getSpec().getTemplate().getSpec().getServiceAccountName();
        String mountPath = container.getVolumeMounts().stream().filter(m -> m.getName().equals("tls")).findFirst()
                .orElseThrow(() -> new IllegalStateException("the Deployment mounts no tls volume")).getMountPath();
        String secretName = deployment.getSpec().getTemplate().getSpec().getVolumes().stream()
                .filter(v -> v.getName().equals("tls")).findFirst().orElseThrow().getSecret().getSecretName();
        writeSecretFiles(admin.secrets().inNamespace(namespace).withName(secretName).get(), tlsDir);
        this.args = localArgs(container.getArgs(), mountPath, tlsDir);
        NodeManagerOperator operator = new NodeManagerOperator();
        new CommandLine(operator).parseArgs(args.toArray(String[]::new));
        try (KubernetesClient serviceAccountClient = kube.serviceAccountClient(namespace, serviceAccount)) {
            this.client = responses.client(serviceAccountClient.getConfiguration());
        }
        this.manager = new NodeManager(client, operator.config(), InstantSource.system(),
                new PrometheusMeterRegistry(PrometheusConfig.DEFAULT));
    }

    /**
     * The controller of the release whose objects are named {@code fullname} in {@code namespace}, not started yet;
     * its TLS files are written to {@code tlsDir}.
     */
    static ChartController of(RealControlPlane kube, String namespace, String fullname, Path tlsDir) {
        return new ChartController(kube, namespace, fullname, tlsDir);
    }

    /** Starts caches, the AgentControl server and the operator (fails when an informer cannot list or watch). */
    ChartController start() throws IOException {
        manager.start();
        return this;
    }

    // The chart's arguments with the pod-only parts replaced: files under the Secret's mount path, fixed ports.
    private static List<String> localArgs(List<String> chartArgs, String mountPath, Path tlsDir) {
        List<String> local = new ArrayList<>();
        for (String a : chartArgs) {
            if (a.startsWith("--grpc-port=")) {
                local.add("--grpc-port=0");
            } else if (a.startsWith("--health-port=")) {
                local.add("--health-port=-1");
            } else if (a.startsWith("--probe-port=")) {
                local.add("--probe-port=-1");
            } else if (a.contains("=" + mountPath + "/")) {
                local.add(a.replace("=" + mountPath + "/", "=" + tlsDir + "/"));
            } else {
                local.add(a);
            }
        }
        local.add("--advertise-host=127.0.0.1");
        return List.copyOf(local);
    }

    private static void writeSecretFiles(Secret secret, Path dir) {
        try {
            Files.createDirectories(dir);
            for (Map.Entry<String, String> e : secret.getData().entrySet()) {
                Files.write(dir.resolve(e.getKey()), Base64.getDecoder().decode(e.getValue()));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The controller's command line (the chart's, localised). */
    List<String> args() {
        return args;
    }

    /** The AgentControl port. */
    int grpcPort() {
        return manager.grpcPort();
    }

    /** Every answer the API server gave the controller. */
    ApiResponses responses() {
        return responses;
    }

    @Override
    public void close() {
        manager.close();
        client.close();
    }
}
