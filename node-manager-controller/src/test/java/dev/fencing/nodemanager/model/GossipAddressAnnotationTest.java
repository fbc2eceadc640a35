package dev.fencing.nodemanager.model;

import static dev.fencing.nodemanager.model.TestNodes.node;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.policy.GossipNetworks;
import dev.fencing.policy.Reachability;
import io.fabric8.kubernetes.api.model.Node;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class GossipAddressAnnotationTest {

    static final String N1 = "198.18.0.0/24";
    static final String N2 = "198.19.0.0/24";
    static final GossipNetworks TWO = GossipNetworks.parse(List.of(N2, N1), Reachability.ALL);

    @Test
    void aReportBecomesTheValueWithOnlyTheGroupsNetworksAndIpsInsideThemSortedByCidr() {
        Map<String, String> reported = new LinkedHashMap<>();
        reported.put(N2, "198.19.0.21");
        reported.put("10.9.0.0/16", "10.9.0.1");
        reported.put(N1, "198.18.0.1");
        assertThat(GossipAddressAnnotation.fromReport(TWO, reported))
                .contains("198.18.0.0/24=198.18.0.1,198.19.0.0/24=198.19.0.21");

        assertThat(GossipAddressAnnotation.fromReport(TWO, Map.of(N1, "198.19.0.1", N2, "198.19.0.2")))
                .contains("198.19.0.0/24=198.19.0.2");
    }

    @Test
    void aReportWithNothingUsableGivesNoValueSoWhatIsKnownIsNotErased() {
        assertThat(GossipAddressAnnotation.fromReport(TWO, Map.of())).isEmpty();
        assertThat(GossipAddressAnnotation.fromReport(TWO, Map.of(N1, "10.0.0.1", "10.9.0.0/16", "10.9.0.1")))
                .isEmpty();
        assertThat(GossipAddressAnnotation.fromReport(GossipNetworks.SINGLE, Map.of(N1, "198.18.0.1"))).isEmpty();
    }

    @Test
    void aValueParsesBackToWhatWasWritten() {
        String value = GossipAddressAnnotation.fromReport(TWO, Map.of(N1, "198.18.0.1", N2, "198.19.0.21"))
                .orElseThrow();
        assertThat(GossipAddressAnnotation.parse(value)).isEqualTo(Map.of(N1, "198.18.0.1", N2, "198.19.0.21"));
    }

    @Test
    void malformedEntriesAreSkippedAndAnOverlongValueIsReadOnlyAsFarAsAGroupCanNeed() {
        assertThat(GossipAddressAnnotation.parse(null)).isEmpty();
        assertThat(GossipAddressAnnotation.parse("")).isEmpty();
        assertThat(GossipAddressAnnotation.parse(" 198.18.0.0/24 = 198.18.0.1 ,junk,=1.2.3.4,198.19.0.0/24=,"))
                .isEqualTo(Map.of(N1, "198.18.0.1"));
        // A repeated CIDR: the first entry counts.
        assertThat(GossipAddressAnnotation.parse(N1 + "=198.18.0.1," + N1 + "=198.18.0.2"))
                .isEqualTo(Map.of(N1, "198.18.0.1"));
        StringBuilder longValue = new StringBuilder();
        for (int i = 0; i < 1000; i++) {
            longValue.append("10.").append(i / 250).append('.').append(i % 250).append(".0/24=1.1.1.1,");
        }
        assertThat(GossipAddressAnnotation.parse(longValue.toString())).hasSize(2 * GossipNetworks.MAX_NETWORKS);
    }

    @Test
    void theValueIsReadFromTheNodesAnnotations() {
        Node plain = node("a", "g", 1);
        assertThat(GossipAddressAnnotation.of(plain)).isNull();
        plain.getMetadata().setAnnotations(Map.of(GossipAddressAnnotation.KEY, N1 + "=198.18.0.1"));
        assertThat(GossipAddressAnnotation.of(plain)).isEqualTo(N1 + "=198.18.0.1");
    }
}
