package dev.fencing.helm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.nodemanager.dependent.AgentDaemonSetFactory;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Service;
import java.io.IOException;
import java.nio.file.Files;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The Prometheus Operator objects and the Grafana dashboard: off by default, and when on they scrape the ports and
 * ship the tested rules and dashboard files as they are.
 */
class MonitoringTest {

    private static final List<String> KINDS = List.of("ServiceMonitor", "PodMonitor", "PrometheusRule");

    @Test
    void noMonitoringObjectIsRenderedByDefault() {
        Rendered r = FencingChart.render();
        assertThat(r.describe()).noneMatch(d -> KINDS.contains(d.substring(0, d.indexOf('/'))));
        assertThat(r.all(ConfigMap.class)).noneMatch(c -> c.getMetadata().getName().endsWith("-dashboard"));
    }

    @Test
    void grafanaDashboardIsAConfigMapTheSidecarPicksUpHoldingTheDashboardFile() throws IOException {
        Rendered r = FencingChart.render("monitoring.grafanaDashboard.enabled", true,
                "monitoring.grafanaDashboard.namespace", "monitoring");

        ConfigMap dashboard = r.named(ConfigMap.class, "node-manager-controller-dashboard");
        assertThat(dashboard.getMetadata().getLabels()).containsEntry("grafana_dashboard", "1");
        assertThat(dashboard.getMetadata().getNamespace()).isEqualTo("monitoring");
        String json = dashboard.getData().get("fencing-group.json");
        assertThat(json).isEqualTo(Files.readString(FencingChart.dir().resolve("files/dashboard.json")).strip());
        Map<String, Object> parsed = FencingChart.parse(json, Map.class);
        assertThat(parsed).containsEntry("uid", "fencing-group");
        assertThat(list(parsed.get("panels"))).hasSizeGreaterThanOrEqualTo(8);
    }

    @Test
    void serviceMonitorScrapesTheControllerServicesMetricsPort() {
        Rendered r = FencingChart.render("monitoring.serviceMonitor.enabled", true,
                "monitoring.serviceMonitor.labels.release", "prom", "monitoring.serviceMonitor.interval", "45s");

        Map<String, Object> spec = spec(monitor(r, "ServiceMonitor"));
        Service service = r.one(Service.class);
        assertThat(service.getSpec().getPorts()).anyMatch(p -> p.getName().equals("metrics"));
        assertThat(map(spec.get("selector")).get("matchLabels")).isInstanceOfSatisfying(Map.class,
                labels -> assertThat(service.getMetadata().getLabels()).containsAllEntriesOf(labels));
        assertThat(list(spec.get("endpoints"))).singleElement().isEqualTo(
                Map.of("port", "metrics", "path", "/metrics", "interval", "45s"));
        assertThat(monitor(r, "ServiceMonitor").getMetadata().getLabels()).containsEntry("release", "prom");
        assertThat(monitor(r, "ServiceMonitor").getMetadata().getNamespace()).isEqualTo(FencingChart.NAMESPACE);
    }

    @Test
    void podMonitorScrapesTheAgentPodsMetricsPortAndLabelsSeriesWithTheGroup() {
        Rendered r = FencingChart.render("monitoring.podMonitor.enabled", true,
                "monitoring.podMonitor.labels.release", "prom");

        GenericKubernetesResource monitor = monitor(r, "PodMonitor");
        Map<String, Object> spec = spec(monitor);
        // The labels and port name the controller puts on the agent DaemonSets' pods.
        assertThat(map(spec.get("selector")).get("matchLabels"))
                .isEqualTo(Map.of(AgentDaemonSetFactory.APP_LABEL, AgentDaemonSetFactory.APP));
        Map<String, Object> endpoint = map(list(spec.get("podMetricsEndpoints")).get(0));
        assertThat(endpoint).containsEntry("port", AgentDaemonSetFactory.METRICS_PORT_NAME)
                .containsEntry("path", "/metrics").containsEntry("interval", "15s");
        String groupMeta = "__meta_kubernetes_pod_label_"
                + AgentDaemonSetFactory.GROUP_LABEL.replaceAll("[^A-Za-z0-9]", "_");
        assertThat(list(endpoint.get("relabelings"))).contains(
                Map.of("sourceLabels", List.of(groupMeta), "targetLabel", "group"));
        assertThat(monitor.getMetadata().getLabels()).containsEntry("release", "prom");
    }

    @Test
    void prometheusRuleShipsTheRuleGroupsPromtoolTests() throws IOException {
        Rendered r = FencingChart.render("monitoring.prometheusRule.enabled", true,
                "monitoring.serviceMonitor.enabled", true);

        Object tested = FencingChart.parse(Files.readString(FencingChart.dir().resolve("files/alerts.yaml")),
                Map.class);
        Map<String, Object> spec = spec(monitor(r, "PrometheusRule"));
        assertThat(spec).isEqualTo(tested);
        assertThat(list(spec.get("groups"))).extracting(g -> map(g).get("name"))
                .containsExactly("fencing-agent", "fencing-controller");
    }

    /** Without the controller scraped, FencingNoControllerLeader's absent() would page for good. */
    @Test
    void prometheusRuleNeedsTheControllerScraped() {
        assertThatThrownBy(() -> FencingChart.render("monitoring.prometheusRule.enabled", true))
                .hasMessageContaining("monitoring.prometheusRule.enabled needs the controller scraped");
        Rendered annotated = FencingChart.render("monitoring.prometheusRule.enabled", true,
                "metrics.scrapeAnnotations", true);
        assertThat(annotated.describe()).anyMatch(d -> d.startsWith("PrometheusRule/"));
    }

    private static GenericKubernetesResource monitor(Rendered r, String kind) {
        List<GenericKubernetesResource> found = r.all(GenericKubernetesResource.class).stream()
                .filter(o -> o.getKind().equals(kind)).toList();
        assertThat(found).as("%s in %s", kind, r.describe()).hasSize(1);
        assertThat(found.get(0).getApiVersion()).isEqualTo("monitoring.coreos.com/v1");
        return found.get(0);
    }

    private static Map<String, Object> spec(GenericKubernetesResource o) {
        return map(o.getAdditionalProperties().get("spec"));
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> map(Object o) {
        return (Map<String, Object>) o;
    }

    @SuppressWarnings("unchecked")
    private static List<Object> list(Object o) {
        return (List<Object>) o;
    }
}
