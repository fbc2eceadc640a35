package dev.fencing.nodemanager.rbac;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Tells the controller's API calls apart from the test's own on a shared CRUD mock: the controller gets a client
 * with its own User-Agent, and {@link #controllerCalls()} drains the mock's request log keeping only those.
 */
public final class ApiCallRecorder {

    private static final String USER_AGENT = "node-manager-controller-under-rbac-test";
    private final KubernetesMockServer server;

    public ApiCallRecorder(KubernetesMockServer server) {
        this.server = server;
    }

    /** A client for the controller under test; its requests are the ones recorded. */
    public KubernetesClient controllerClient(KubernetesClient testClient) {
        Config config = new ConfigBuilder(testClient.getConfiguration()).withUserAgent(USER_AGENT).build();
        return new KubernetesClientBuilder().withConfig(config).build();
    }

    /** Every request the controller made so far (drains the log). */
    public List<ApiCall> controllerCalls() throws InterruptedException {
        List<ApiCall> calls = new ArrayList<>();
        RecordedRequest r;
        while ((r = server.takeRequest(100, TimeUnit.MILLISECONDS)) != null) {
            if (USER_AGENT.equals(r.getHeader("User-Agent"))) {
                ApiCall.of(r).ifPresent(calls::add);
            }
        }
        return calls;
    }

    /** Fails naming every controller call the chart's roles do not allow; returns the calls checked. */
    public List<String> assertChartAllowsEveryCall(String releaseNamespace) throws InterruptedException {
        return checkedCalls(releaseNamespace).stream().map(ApiCall::toString).distinct().sorted().toList();
    }

    /** Every controller call so far (drains the log), after checking that the chart's roles allow each. */
    public List<ApiCall> checkedCalls(String releaseNamespace) throws InterruptedException {
        List<ApiCall> calls = controllerCalls();
        List<ApiCall> missing = ChartRbac.render().uncovered(calls, releaseNamespace);
        if (!missing.isEmpty()) {
            throw new AssertionError("the chart's RBAC (helm/fencing/templates/rbac.yaml) does not allow these "
                    + "controller calls: " + missing);
        }
        return calls;
    }
}
