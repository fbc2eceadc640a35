package dev.fencing.nodemanager.report;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.proto.nodemanager.v1.AgentReport;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class AgentReportListenerTest {

    @Test
    void everyRecordedReportReachesTheReportListenersWithItsNetworkAddresses() {
        AgentReports reports = new AgentReports();
        List<ReceivedReport> seen = new ArrayList<>();
        reports.addReportListener(seen::add);
        AgentReport report = AgentReport.newBuilder().putNetworkAddresses("198.19.0.0/24", "198.19.0.11").build();
        reports.record("a", "g", report, Instant.EPOCH);
        reports.record("a", "g", report, Instant.EPOCH.plusSeconds(1));
        assertThat(seen).hasSize(2);
        assertThat(seen.get(0).node()).isEqualTo("a");
        assertThat(seen.get(0).group()).isEqualTo("g");
        assertThat(seen.get(1).report().getNetworkAddressesMap()).containsEntry("198.19.0.0/24", "198.19.0.11");
    }
}
