package dev.fencing.nodemanager.escalation;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.proto.fencing.v1.DisarmReason;
import dev.fencing.proto.nodemanager.v1.AgentReport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class EscalationTriggerTest {

    private static AgentReport disarmed(DisarmReason.Kind kind) {
        return AgentReport.newBuilder().setWatchdogCondition("not opened")
                .addDisarmReasons(DisarmReason.newBuilder().setKind(kind).setDetail("x")).build();
    }

    @ParameterizedTest
    @EnumSource(value = DisarmReason.Kind.class, names = {"KIND_DISABLE_FILE", "KIND_MAINTENANCE",
            "KIND_BEING_REMOVED", "KIND_NOTIFY_MODE", "KIND_SHUTTING_DOWN"})
    void aDisarmSomeoneChoseIsOnPurpose(DisarmReason.Kind kind) {
        assertThat(EscalationTrigger.onPurpose(disarmed(kind))).isTrue();
        // Also next to a reason that alone would not be: the disable file on a node whose watchdog is missing.
        assertThat(EscalationTrigger.onPurpose(disarmed(kind).toBuilder().addDisarmReasons(DisarmReason.newBuilder()
                .setKind(DisarmReason.Kind.KIND_WATCHDOG_UNAVAILABLE)).build())).isTrue();
    }

    @ParameterizedTest
    @EnumSource(value = DisarmReason.Kind.class, names = {"KIND_NO_CONFIG", "KIND_ARMING_DELAY",
            "KIND_WATCHDOG_UNAVAILABLE", "KIND_NO_GOSSIP_KEY", "KIND_POISON_PILL"})
    void aNodeThatCouldNotArmIsNotDisarmedOnPurpose(DisarmReason.Kind kind) {
        assertThat(EscalationTrigger.onPurpose(disarmed(kind))).isFalse();
    }

    @Test
    void aCleanStopIsOnPurposeButAFinalReportWhileFencingIsNot() {
        assertThat(EscalationTrigger.onPurpose(disarmed(DisarmReason.Kind.KIND_ARMING_DELAY).toBuilder()
                .setFinalReport(true).build())).isTrue();
        assertThat(EscalationTrigger.onPurpose(AgentReport.newBuilder().setWatchdogCondition("ok").setArmed(true)
                .setFencingInProgress(true).setFinalReport(true).build())).isFalse();
    }
}
