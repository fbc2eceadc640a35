package dev.fencing.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class FencingSpecReaderTest {

    @Test
    void absentOrEmptyBlockIsAllDefaults() {
        assertThat(FencingSpecReader.read(null, "fencing").spec()).isEqualTo(FencingSpec.DEFAULTS);
        assertThat(FencingSpecReader.read(Map.of(), "fencing").spec()).isEqualTo(FencingSpec.DEFAULTS);
    }

    @Test
    void readsAFullBlockAsAYamlParserReturnsIt() {
        Map<String, Object> timings = new LinkedHashMap<>();
        timings.put("probeInterval", "800ms");
        timings.put("suspicionMult", 4);
        timings.put("gossipNodes", 5L);
        timings.put("localHealthCap", 2);
        timings.put("fenceMargin", "1m30s");
        Map<String, Object> block = Map.of(
                "mode", "Notify",
                "watchdog", Map.of("timeout", "2m"),
                "quorumLossAction", "Exclude",
                "profile", "Slow",
                "quorum", Map.of("size", 3, "tieBreakers", List.of("LowestName", "Disk")),
                "timings", timings);
        FencingSpec spec = FencingSpecReader.read(block, "fencing").orThrow();
        assertThat(spec).isEqualTo(new FencingSpec(Mode.NOTIFY, Duration.ofMinutes(2), QuorumLossAction.EXCLUDE,
                Profile.SLOW, 3, List.of(TieBreakerKind.LOWEST_NAME, TieBreakerKind.DISK),
                new TimingOverrides(Duration.ofMillis(800), null, 4, null, null, 5, null, null, null, null, 2.0, null,
                        null, null, Duration.ofSeconds(90))));
    }

    @Test
    void gossipLabelIsGroupNameByDefaultOrNone() {
        assertThat(read(Map.of()).spec().effectiveGossipLabel()).isEqualTo(GossipLabel.GROUP_NAME);
        assertThat(read(Map.of("gossipLabel", "GroupName")).spec().gossipLabel()).isEqualTo(GossipLabel.GROUP_NAME);
        assertThat(read(Map.of("gossipLabel", "None")).spec().effectiveGossipLabel()).isEqualTo(GossipLabel.NONE);
        assertThat(read(Map.of("gossipLabel", "none")).violations()).singleElement()
                .satisfies(v -> assertThat(v.message()).contains("write 'None'"));
        assertThat(read(Map.of("gossipLabel", "Off")).violations()).singleElement()
                .satisfies(v -> {
                    assertThat(v.field()).isEqualTo("fencing.gossipLabel");
                    assertThat(v.message()).contains("GroupName").contains("None");
                });
        // the resolved policy carries it, and the copies keep it
        FencingSpec none = read(Map.of("gossipLabel", "None")).spec();
        assertThat(PolicyResolver.resolve(none.withProfile(Profile.SLOW), 3).gossipLabel())
                .isEqualTo(GossipLabel.NONE);
        assertThat(PolicyResolver.resolve(FencingSpec.DEFAULTS, 3).gossipLabel()).isEqualTo(GossipLabel.GROUP_NAME);
    }

    @Test
    void readsStormLimitsAndAfterFence() {
        FencingSpec spec = read(Map.of("storm", Map.of("minHealthy", "40%", "maxConcurrent", 2, "cooldown", "5m"),
                "afterFence", "DeleteNode")).orThrow();
        assertThat(spec.storm()).isEqualTo(new StormLimits(new MinHealthy(40, true), 2, Duration.ofMinutes(5)));
        assertThat(spec.afterFence()).isEqualTo(AfterFence.DELETE_NODE);
        assertThat(read(Map.of("storm", Map.of("minHealthy", 3))).orThrow().effectiveStorm())
                .isEqualTo(new StormLimits(new MinHealthy(3, false), null, null));
        assertThat(FencingSpec.DEFAULTS.effectiveStorm().effectiveMinHealthy()).isEqualTo(MinHealthy.DEFAULT);
        assertThat(FencingSpec.DEFAULTS.effectiveStorm().effectiveCooldown()).isEqualTo(Duration.ofMinutes(10));
        assertThat(FencingSpec.DEFAULTS.effectiveAfterFence()).isEqualTo(AfterFence.AUTO);
        assertThat(spec.withProfile(Profile.SLOW).storm()).isEqualTo(spec.storm());
    }

    @Test
    void badStormValuesSayWhatToWrite() {
        assertThat(read(Map.of("storm", Map.of("minHealthy", "most", "maxConcurrent", 0, "cooldwn", "1m"),
                "afterFence", "Delete")).violations()).extracting(Violation::field).containsExactlyInAnyOrder(
                        "fencing.storm.cooldwn", "fencing.storm.minHealthy", "fencing.storm.maxConcurrent",
                        "fencing.afterFence");
        assertThat(read(Map.of("storm", Map.of("maxConcurrent", 0))).violations().get(0).message())
                .contains("at least 1");
    }

    @Test
    void readsTheDiskBlock() {
        FencingSpec spec = FencingSpecReader.read(Map.of("disk", Map.of("device", "/dev/sdb", "required", true,
                "ioTimeout", "2s")), "fencing").orThrow();
        assertThat(spec.disk()).isEqualTo(new DiskSpec("/dev/sdb", true, java.time.Duration.ofSeconds(2)));
        assertThat(FencingSpecReader.read(Map.of("disk", Map.of("required", "yes", "size", 1)), "fencing")
                .violations()).extracting(Violation::field).containsExactly("fencing.disk.size",
                        "fencing.disk.required");
    }

    @Test
    void quorumSizeIsAutoOrAWholeNumber() {
        assertThat(read(Map.of("quorum", Map.of("size", "Auto"))).spec().quorumSize()).isNull();
        assertThat(read(Map.of("quorum", Map.of("size", "4"))).spec().quorumSize()).isEqualTo(4);
        assertThat(read(Map.of("quorum", Map.of("size", 2.5))).violations()).containsExactly(new Violation(
                "fencing.quorum.size", "quorum size '2.5' is not valid; write Auto or a whole number such as 3"));
        assertThat(read(Map.of("quorum", Map.of("size", 5_000_000_000L))).valid()).isFalse();
    }

    @Test
    void unknownFieldsAreNamedWithTheKnownOnes() {
        assertThat(read(Map.of("mdoe", "Watchdog", "timings", Map.of("probeIntreval", "1s"))).violations())
                .containsExactly(
                        new Violation("fencing.mdoe", "unknown field 'mdoe'; known fields are afterFence, disk, "
                                + "gossipLabel, mode, networks, profile, quorum, quorumLossAction, reachability, storm, "
                                + "timings, watchdog"),
                        new Violation("fencing.timings.probeIntreval", "unknown field 'probeIntreval'; known fields "
                                + "are armingDelay, evaluationTick, feedInterval, fenceMargin, gossipInterval, "
                                + "gossipNodes, heartbeatInterval, localHealthCap, probeInterval, probeTimeout, "
                                + "pushPullInterval, quorumWindow, retransmitMult, suspicionMaxTimeoutMult, suspicionMult"));
    }

    @Test
    void wrongTypesSayWhatToWrite() {
        Map<String, Object> block = Map.of(
                "mode", 1,
                "watchdog", "60s",
                "quorum", Map.of("tieBreakers", "ControlPlane"),
                "timings", Map.of("suspicionMult", "3", "localHealthCap", "high", "gossipInterval", 200));
        assertThat(read(block).violations()).containsExactlyInAnyOrder(
                new Violation("fencing.mode", "must be a string, not '1'; quote it in YAML"),
                new Violation("fencing.watchdog", "must be an object with fields, not '60s'"),
                new Violation("fencing.quorum.tieBreakers",
                        "tieBreakers must be a list such as [ControlPlane], not 'ControlPlane'"),
                new Violation("fencing.timings.suspicionMult", "suspicionMult must be a whole number such as 3, not '3'"),
                new Violation("fencing.timings.localHealthCap", "localHealthCap must be a number such as 1.5, not 'high'"),
                new Violation("fencing.timings.gossipInterval", "must be a string, not '200'; quote it in YAML"));
    }

    @Test
    void badSpellingsCarryTheParsersMessages() {
        assertThat(read(Map.of("quorum", Map.of("tieBreakers", Arrays.asList("ControlPlane", null, "Coin"))))
                .violations()).containsExactly(new Violation("fencing.quorum.tieBreakers[2]",
                "tie-breaker 'Coin' is not known; use one of ControlPlane, LowestName, Disk, APIReachable"));
        assertThat(read(Map.of("watchdog", Map.of("timeout", "90"))).violations()).extracting(Violation::field)
                .containsExactly("fencing.watchdog.timeout");
    }

    @Test
    void emptyTieBreakerEntriesAreKeptForTheResolverToReport() {
        FencingSpec spec = read(Map.of("quorum", Map.of("tieBreakers", Arrays.asList("LowestName", null)))).spec();
        assertThat(spec.tieBreakers()).containsExactly(TieBreakerKind.LOWEST_NAME, null);
        assertThat(PolicyResolver.validate(spec, 3, "fencing")).extracting(Violation::field)
                .containsExactly("fencing.quorum.tieBreakers[1]");
    }

    @Test
    void orThrowCarriesEveryViolation() {
        assertThatThrownBy(() -> read(Map.of("mode", "On", "profile", "Fast")).orThrow())
                .isInstanceOfSatisfying(InvalidPolicyException.class, e -> assertThat(e.violations())
                        .extracting(Violation::field).containsExactly("fencing.mode", "fencing.profile"));
    }

    @Test
    void resultHoldsEitherASpecOrViolations() {
        assertThatThrownBy(() -> new FencingSpecReader.Result(null, List.of()))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new FencingSpecReader.Result(FencingSpec.DEFAULTS, List.of(new Violation("a", "b"))))
                .isInstanceOf(IllegalArgumentException.class);
    }

    private static FencingSpecReader.Result read(Map<String, ?> block) {
        return FencingSpecReader.read(block, "fencing");
    }
}
