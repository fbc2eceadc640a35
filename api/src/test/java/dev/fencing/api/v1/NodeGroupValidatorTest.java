package dev.fencing.api.v1;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.policy.PolicyResolver;
import dev.fencing.policy.Violation;
import io.fabric8.kubernetes.api.model.IntOrString;
import java.util.List;
import org.junit.jupiter.api.Test;

class NodeGroupValidatorTest {

    private static NodeGroup group(Fencing fencing) {
        NodeGroup ng = new NodeGroup();
        ng.getMetadata().setName("workers");
        ng.setSpec(new NodeGroupSpec().withNodeType(NodeType.STATIC).withFencing(fencing));
        return ng;
    }

    @Test
    void aDefaultFencingSpecIsValid() {
        assertThat(NodeGroupValidator.validate(group(new Fencing()), 3)).isEmpty();
    }

    @Test
    void aGroupWithoutFencingNeedsOnlyANodeType() {
        assertThat(NodeGroupValidator.validate(group(null), 3)).isEmpty();
    }

    @Test
    void missingSpecAndNodeTypeAreReported() {
        NodeGroup noSpec = new NodeGroup();
        assertThat(NodeGroupValidator.validate(noSpec, 3)).containsExactly(new Violation("spec",
                "NodeGroup has no spec; set spec.nodeType (and spec.fencing to enable fencing)"));
        NodeGroup noType = group(null);
        noType.getSpec().setNodeType(null);
        assertThat(NodeGroupValidator.validate(noType, 3)).containsExactly(new Violation("spec.nodeType",
                "nodeType is missing; set it to CloudEphemeral, CloudPermanent, CloudStatic or Static"));
    }

    @Test
    void fenceWithNotifyIsRejectedAsTheCelRuleDoes() {
        List<Violation> violations = NodeGroupValidator.validate(
                group(new Fencing().withMode("Notify").withQuorumLossAction("Fence")), 3);
        assertThat(violations).containsExactly(new Violation("spec.fencing.quorumLossAction",
                "Fence needs mode Watchdog, but mode is Notify; set mode: Watchdog, or quorumLossAction: Exclude or Wait"));
    }

    @Test
    void relationsTheSchemaCannotExpressAreChecked() {
        Fencing fencing = new Fencing()
                .withWatchdog(new FencingWatchdog().withTimeout("9s"))
                .withTimings(new FencingTimings().withFeedInterval("3s").withProbeTimeout("1s"));
        assertThat(NodeGroupValidator.validate(group(fencing), 3)).extracting(Violation::field).containsExactly(
                "spec.fencing.timings.probeTimeout", "spec.fencing.timings.feedInterval");
    }

    @Test
    void twoSecondWatchdogIsValidWithCriticalOnly() {
        Fencing critical = new Fencing().withProfile("Critical").withWatchdog(new FencingWatchdog().withTimeout("2s"));
        assertThat(NodeGroupValidator.validate(group(critical), 3)).isEmpty();
        Fencing medium = new Fencing().withProfile("Medium").withWatchdog(new FencingWatchdog().withTimeout("2s"));
        assertThat(NodeGroupValidator.validate(group(medium), 3)).containsExactly(new Violation(
                "spec.fencing.watchdog.timeout", "watchdog timeout 2s is outside 5s..1h for profile Medium; "
                + PolicyResolver.WATCHDOG_TIMEOUT_NEEDS_CRITICAL_MESSAGE));
        Fencing auto = new Fencing().withWatchdog(new FencingWatchdog().withTimeout("4s"));
        assertThat(NodeGroupValidator.validate(group(auto), 3)).extracting(Violation::field)
                .containsExactly("spec.fencing.watchdog.timeout");
    }

    @Test
    void oneSecondWatchdogIsRejectedEvenWithCritical() {
        Fencing fencing = new Fencing().withProfile("Critical").withWatchdog(new FencingWatchdog().withTimeout("1s"));
        assertThat(NodeGroupValidator.validate(group(fencing), 3)).containsExactly(new Violation(
                "spec.fencing.watchdog.timeout", "watchdog timeout 1s is outside 2s..1h for profile Critical; "
                + PolicyResolver.WATCHDOG_TIMEOUT_RANGE_MESSAGE));
    }

    @Test
    void diskTieBreakerWithoutADeviceIsRejectedAsTheCelRuleDoes() {
        Fencing fencing = new Fencing().withQuorum(new FencingQuorum().withTieBreakers(List.of("Disk")));
        assertThat(NodeGroupValidator.validate(group(fencing), 4)).containsExactly(new Violation(
                "spec.fencing.quorum.tieBreakers[0]", PolicyResolver.DISK_NEEDS_DEVICE_MESSAGE));
        assertThat(NodeGroupValidator.warnings(group(fencing), 4)).isEmpty();
        fencing.withDisk(new FencingDisk().withDevice("/dev/sdb").withRequired(true).withIoTimeout("2s"));
        assertThat(NodeGroupValidator.validate(group(fencing), 4)).isEmpty();
        assertThat(NodeGroupFencing.resolve(group(fencing), 4).disk()).contains(
                new dev.fencing.policy.ResolvedDisk("/dev/sdb", true, java.time.Duration.ofSeconds(2)));
    }

    @Test
    void quorumSizeIsCheckedAgainstTheExpectedMembers() {
        Fencing fencing = new Fencing().withQuorum(new FencingQuorum().withSize(new IntOrString(2)));
        assertThat(NodeGroupValidator.validate(group(fencing), 3)).isEmpty();
        assertThat(NodeGroupValidator.validate(group(fencing), 4)).singleElement()
                .satisfies(v -> assertThat(v.message()).startsWith("quorum size 2 is not a majority of 4 expected members"));
    }

    @Test
    void parseErrorsAreReportedInsteadOfRuleViolations() {
        Fencing fencing = new Fencing().withMode("Off").withTimings(new FencingTimings().withFeedInterval("1h"));
        assertThat(NodeGroupValidator.validate(group(fencing), 3)).extracting(Violation::field)
                .containsExactly("spec.fencing.mode");
    }

    @Test
    void warningsComeFromThePolicy() {
        Fencing fencing = new Fencing().withQuorum(new FencingQuorum().withTieBreakers(List.of("APIReachable")));
        assertThat(NodeGroupValidator.warnings(group(fencing), 4)).extracting(Violation::field)
                .containsExactly("spec.fencing.quorum.tieBreakers[0]");
        assertThat(NodeGroupValidator.warnings(group(null), 4)).isEmpty();
        assertThat(NodeGroupValidator.warnings(group(new Fencing().withMode("x")), 4)).isEmpty();
    }
}
