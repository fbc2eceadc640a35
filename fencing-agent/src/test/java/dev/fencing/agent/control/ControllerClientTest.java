package dev.fencing.agent.control;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.fencing.agent.quorum.TieBreakVerdict;
import dev.fencing.proto.nodemanager.v1.AgentHello;
import dev.fencing.proto.nodemanager.v1.AgentReport;
import dev.fencing.proto.nodemanager.v1.ConfigDelta;
import dev.fencing.proto.nodemanager.v1.ControllerMessage;
import dev.fencing.proto.nodemanager.v1.GroupConfig;
import dev.fencing.proto.nodemanager.v1.Maintenance;
import dev.fencing.proto.nodemanager.v1.Member;
import dev.fencing.proto.nodemanager.v1.NodeSignals;
import dev.fencing.proto.nodemanager.v1.TieBreakGrant;
import dev.fencing.proto.nodemanager.v1.TieBreakRequest;
import io.grpc.Server;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ControllerClientTest {

    private static final ControllerClient.Options FAST = new ControllerClient.Options(
            Duration.ofMillis(20), Duration.ofMillis(200), Duration.ofSeconds(5), Duration.ofSeconds(30));

    @TempDir
    Path stateDir;

    private final String serverName = InProcessServerBuilder.generateName();
    private final ScriptedAgentControl controller = new ScriptedAgentControl();
    private final List<ConfigUpdate> updates = new CopyOnWriteArrayList<>();
    private Server server;
    private ControllerClient client;

    @AfterEach
    void tearDown() throws InterruptedException {
        if (client != null) {
            client.close();
        }
        if (server != null) {
            server.shutdownNow().awaitTermination(2, TimeUnit.SECONDS);
        }
    }

    private void startServer() throws Exception {
        server = InProcessServerBuilder.forName(serverName).addService(controller).build().start();
    }

    private ControllerClient newClient() {
        client = new ControllerClient(InProcessChannelBuilder.forName(serverName).build(), "in-process", "node-a",
                "test", stateDir, updates::add, FAST);
        return client;
    }

    private static GroupConfig config(String... members) {
        GroupConfig.Builder b = GroupConfig.newBuilder().setGroup("workers").setNodeName("node-a");
        for (String m : members) {
            b.addMembers(Member.newBuilder().setName(m).setGossipAddress("198.18.0.1:7946"));
        }
        return b.build();
    }

    private static ControllerMessage full(String epoch, long revision, GroupConfig config) {
        return ControllerMessage.newBuilder().setEpoch(epoch).setRevision(revision).setFull(config).build();
    }

    private static ControllerMessage delta(String epoch, long base, long revision, ConfigDelta.Builder change) {
        return ControllerMessage.newBuilder().setEpoch(epoch).setRevision(revision)
                .setDelta(change.setBaseRevision(base)).build();
    }

    private ConfigUpdate last() {
        return updates.get(updates.size() - 1);
    }

    @Test
    void fullConfigIsDeliveredPersistedAndMarksTheClientConnected() throws Exception {
        startServer();
        controller.onHello((hello, out) -> out.onNext(full("e1", 5, config("node-b", "node-a"))));
        newClient().start();

        await().atMost(5, TimeUnit.SECONDS).until(() -> client.connected());
        assertThat(last().source()).isEqualTo(ConfigUpdate.SOURCE_CONTROLLER);
        assertThat(last().revision()).isEqualTo(5);
        assertThat(last().config().getMembersList()).extracting(Member::getName).containsExactly("node-a", "node-b");
        assertThat(new ConfigStateFile(stateDir).read()).get().extracting(MaterialisedConfig::revision).isEqualTo(5L);
        AgentHello hello = controller.hellos.poll(1, TimeUnit.SECONDS);
        assertThat(hello.getNodeName()).isEqualTo("node-a");
        assertThat(hello.getLastRevision()).isZero();
    }

    @Test
    void deltasApplyOnTopOfTheHeldRevisionAndAReconnectResumesFromIt() throws Exception {
        startServer();
        controller.onHello((hello, out) -> {
            if (hello.getLastRevision() == 0) {
                out.onNext(full("e1", 5, config("node-a", "node-b")));
            } else {
                out.onNext(delta("e1", hello.getLastRevision(), 9, ConfigDelta.newBuilder().setMemberRemoved("node-b")));
            }
        });
        newClient().start();
        await().atMost(5, TimeUnit.SECONDS).until(() -> client.connected());

        controller.push(delta("e1", 5, 7, ConfigDelta.newBuilder()
                .setMemberUpserted(Member.newBuilder().setName("node-c").setGossipAddress("198.18.0.3:7946"))));
        await().atMost(5, TimeUnit.SECONDS).until(() -> last().revision() == 7);
        assertThat(last().config().getMembersList()).extracting(Member::getName)
                .containsExactly("node-a", "node-b", "node-c");

        controller.dropStream();
        await().atMost(5, TimeUnit.SECONDS).until(() -> controller.hellos.size() >= 2);
        controller.hellos.take();
        AgentHello resumed = controller.hellos.take();
        assertThat(resumed.getEpoch()).isEqualTo("e1");
        assertThat(resumed.getLastRevision()).isEqualTo(7);
        await().atMost(5, TimeUnit.SECONDS).until(() -> last().revision() == 9);
        assertThat(last().config().getMembersList()).extracting(Member::getName).containsExactly("node-a", "node-c");
        assertThat(new ConfigStateFile(stateDir).read()).get().extracting(MaterialisedConfig::revision).isEqualTo(9L);
    }

    /**
     * Deltas marked "more" belong to one change with the delta that follows: the agent gets (and caches) the config
     * only once the last has arrived, never the half-changed one in between.
     */
    @Test
    void deltasOfOneChangeReachTheAgentTogether() throws Exception {
        startServer();
        controller.onHello((hello, out) -> out.onNext(full("e1", 5, config("node-a", "node-b", "node-c"))));
        newClient().start();
        await().atMost(5, TimeUnit.SECONDS).until(() -> client.connected());
        int before = updates.size();

        controller.push(delta("e1", 5, 6, ConfigDelta.newBuilder().setMemberRemoved("node-c").setMore(true)));
        controller.push(delta("e1", 6, 7, ConfigDelta.newBuilder().setMemberRemoved("node-b")));
        await().atMost(5, TimeUnit.SECONDS).until(() -> last().revision() == 7);
        assertThat(updates.subList(before, updates.size())).as("one update for the whole change").singleElement()
                .satisfies(u -> assertThat(u.config().getMembersList()).extracting(Member::getName)
                        .containsExactly("node-a"));
        assertThat(new ConfigStateFile(stateDir).read()).get().extracting(MaterialisedConfig::revision).isEqualTo(7L);
    }

    @Test
    void aConfigTheAgentRefusesIsNotCachedSoARestartStartsFromTheLastOneItTook() throws Exception {
        startServer();
        controller.onHello((hello, out) -> out.onNext(full("e1", 5, config("node-a", "node-b"))));
        List<Long> offered = new CopyOnWriteArrayList<>();
        client = new ControllerClient(InProcessChannelBuilder.forName(serverName).build(), "in-process", "node-a",
                "test", stateDir, update -> offered.add(update.revision()) && update.revision() != 7, FAST);
        client.start();
        await().atMost(5, TimeUnit.SECONDS).until(() -> client.connected());
        assertThat(new ConfigStateFile(stateDir).read()).get().extracting(MaterialisedConfig::revision).isEqualTo(5L);

        controller.push(delta("e1", 5, 7, ConfigDelta.newBuilder()
                .setMemberUpserted(Member.newBuilder().setName("node-c").setGossipAddress("198.18.0.3:7946"))));
        await().atMost(5, TimeUnit.SECONDS).until(() -> offered.contains(7L));
        assertThat(new ConfigStateFile(stateDir).read()).get()
                .as("the refused revision 7 must not replace the cached revision 5")
                .extracting(MaterialisedConfig::revision).isEqualTo(5L);

        controller.push(delta("e1", 7, 8, ConfigDelta.newBuilder().setMemberRemoved("node-c")));
        await().atMost(5, TimeUnit.SECONDS).until(() -> offered.contains(8L));
        await().atMost(5, TimeUnit.SECONDS).until(() -> new ConfigStateFile(stateDir).read().get().revision() == 8L);
    }

    @Test
    void everyStreamAttemptFirstResetsTheChannelsOwnConnectBackoff() throws Exception {
        startServer();
        controller.onHello((hello, out) -> out.onNext(full("e1", 5, config("node-a", "node-b"))));
        BackoffRecordingChannel channel =
                new BackoffRecordingChannel(InProcessChannelBuilder.forName(serverName).build());
        client = new ControllerClient(channel, "in-process", "node-a", "test", stateDir, updates::add, FAST);
        client.start();
        await().atMost(5, TimeUnit.SECONDS).until(() -> client.connected());

        controller.dropStream();
        await().atMost(5, TimeUnit.SECONDS).until(() -> controller.hellos.size() >= 2);
        controller.dropStream();
        await().atMost(5, TimeUnit.SECONDS).until(() -> controller.hellos.size() >= 3);

        // Only the agent's backoff may delay a retry: grpc's would keep failing streams for up to 120 s after an outage.
        assertThat(channel.backoffResets()).isGreaterThanOrEqualTo(controller.hellos.size());
    }

    @Test
    void aDeltaThatDoesNotContinueTheHeldRevisionIsNotAppliedAndTriggersAResync() throws Exception {
        startServer();
        controller.onHello((hello, out) -> {
            if (controller.hellos.size() == 1) {
                out.onNext(full("e1", 5, config("node-a")));
                out.onNext(delta("e1", 6, 8, ConfigDelta.newBuilder().setSignals(NodeSignals.newBuilder()
                        .setMaintenance(Maintenance.newBuilder().setSource("update.node.deckhouse.io/approved")))));
            } else {
                out.onNext(full("e1", 8, config("node-a", "node-z")));
            }
        });
        newClient().start();

        await().atMost(5, TimeUnit.SECONDS).until(() -> controller.hellos.size() >= 2);
        controller.hellos.take();
        assertThat(controller.hellos.take().getLastRevision()).isEqualTo(5);
        await().atMost(5, TimeUnit.SECONDS).until(() -> last().revision() == 8);
        assertThat(updates).noneMatch(u -> u.config().getSignals().hasMaintenance());
        assertThat(last().config().getMembersCount()).isEqualTo(2);
    }

    @Test
    void controllerDownMeansTheCachedConfigIsUsed() throws Exception {
        new ConfigStateFile(stateDir).write(new MaterialisedConfig("e0", 42, config("node-a", "node-b", "node-c")));
        newClient().start();   // no server registered under this name: every connect fails

        await().atMost(5, TimeUnit.SECONDS).until(() -> !updates.isEmpty());
        assertThat(updates.get(0).source()).isEqualTo(ConfigUpdate.SOURCE_CACHE);
        assertThat(updates.get(0).revision()).isEqualTo(42);
        assertThat(updates.get(0).config().getMembersCount()).isEqualTo(3);
        assertThat(client.connected()).isFalse();

        // When the controller comes up, the agent presents the cached identity.
        startServer();
        controller.onHello((hello, out) -> out.onNext(full("e1", 3, config("node-a", "node-b"))));
        AgentHello hello = controller.hellos.poll(5, TimeUnit.SECONDS);
        assertThat(hello.getEpoch()).isEqualTo("e0");
        assertThat(hello.getLastRevision()).isEqualTo(42);
        await().atMost(5, TimeUnit.SECONDS).until(() -> client.connected());
        assertThat(last().source()).isEqualTo(ConfigUpdate.SOURCE_CONTROLLER);
    }

    @Test
    void aCorruptedStateFileIsIgnoredAndReplacedByAFreshSync() throws Exception {
        Files.createDirectories(stateDir);
        Path file = stateDir.resolve(ConfigStateFile.FILE_NAME);
        Files.writeString(file, "FNMCFG1\n garbage that is not a config", StandardCharsets.US_ASCII);
        startServer();
        controller.onHello((hello, out) -> out.onNext(full("e1", 4, config("node-a"))));
        newClient().start();

        AgentHello hello = controller.hellos.poll(5, TimeUnit.SECONDS);
        assertThat(hello.getLastRevision()).isZero();
        assertThat(hello.getEpoch()).isEmpty();
        await().atMost(5, TimeUnit.SECONDS).until(() -> client.connected());
        assertThat(updates).allMatch(u -> u.source().equals(ConfigUpdate.SOURCE_CONTROLLER));
        assertThat(new ConfigStateFile(stateDir).read()).get().extracting(MaterialisedConfig::revision).isEqualTo(4L);
    }

    @Test
    void aTruncatedStateFileIsReportedAsCorrupt() throws Exception {
        ConfigStateFile state = new ConfigStateFile(stateDir);
        state.write(new MaterialisedConfig("e0", 1, config("node-a")));
        byte[] bytes = Files.readAllBytes(state.path());
        Files.write(state.path(), java.util.Arrays.copyOf(bytes, bytes.length - 3));
        org.assertj.core.api.Assertions.assertThatThrownBy(state::read)
                .isInstanceOf(ConfigStateFile.CorruptStateException.class)
                .hasMessageContaining("does not match file size");
    }

    @Test
    void aControllerThatNeverSendsAConfigIsAbandonedAfterTheSyncDeadline() throws Exception {
        startServer();   // the scripted controller ignores the hello
        client = new ControllerClient(InProcessChannelBuilder.forName(serverName).build(), "in-process", "node-a",
                "test", stateDir, updates::add, new ControllerClient.Options(Duration.ofMillis(20),
                        Duration.ofMillis(50), Duration.ofMillis(200), Duration.ofSeconds(30)));
        client.start();
        assertThat(controller.hellos.poll(5, TimeUnit.SECONDS)).isNotNull();
        assertThat(controller.hellos.poll(5, TimeUnit.SECONDS)).as("a second attempt after the deadline").isNotNull();
        assertThat(client.connected()).isFalse();
    }

    @Test
    void theLatestReportIsSentOnceSynced() throws Exception {
        startServer();
        controller.onHello((hello, out) -> out.onNext(full("e1", 5, config("node-a"))));
        newClient();
        client.report(AgentReport.newBuilder().setArmed(false).build());
        client.report(AgentReport.newBuilder().setArmed(true).build());
        client.start();

        AgentReport report = controller.reports.poll(5, TimeUnit.SECONDS);
        assertThat(report.getArmed()).isTrue();
        assertThat(report.getEpoch()).isEqualTo("e1");
        assertThat(report.getAppliedRevision()).isEqualTo(5);
    }

    @Test
    void aCleanStopSendsTheFinalReportBeforeHalfClosingAndWaitsForTheControllerToClose() throws Exception {
        startServer();
        controller.onHello((hello, out) -> out.onNext(full("e1", 5, config("node-a"))));
        newClient().start();
        await().atMost(5, TimeUnit.SECONDS).until(() -> client.connected());
        client.report(AgentReport.newBuilder().setArmed(true).build());
        await().atMost(5, TimeUnit.SECONDS).until(() -> controller.events.contains("report"));

        boolean acknowledged = client.finish(AgentReport.newBuilder().setArmed(false)
                .addDisarmReasons(dev.fencing.proto.fencing.v1.DisarmReason.newBuilder()
                        .setKind(dev.fencing.proto.fencing.v1.DisarmReason.Kind.KIND_SHUTTING_DOWN))
                .build(), Duration.ofSeconds(2));

        assertThat(acknowledged).as("the controller closed its side after reading the final report").isTrue();
        assertThat(controller.events).endsWith("final-report", "half-closed");
        AgentReport last = controller.reports.stream().reduce((a, b) -> b).orElseThrow();
        assertThat(last.getFinalReport()).isTrue();
        assertThat(last.getArmed()).isFalse();
        assertThat(last.getEpoch()).isEqualTo("e1");
        assertThat(last.getDisarmReasons(0).getKind())
                .isEqualTo(dev.fencing.proto.fencing.v1.DisarmReason.Kind.KIND_SHUTTING_DOWN);
        client.close();
        assertThat(controller.hellos).as("no reconnect after the clean stop").hasSize(1);
    }

    @Test
    void aCleanStopWithoutAControllerDoesNotWait() {
        newClient().start();   // no server: never connected
        assertThat(client.finish(AgentReport.newBuilder().build(), Duration.ofSeconds(30))).isFalse();
    }

    @Test
    void controlPlaneTieBreakerWinsOnlyWhileTheGrantedLeaseLastsFromTheSendTime() throws Exception {
        startServer();
        controller.onHello((hello, out) -> out.onNext(full("e1", 5, config("node-a", "node-b"))));
        newClient().start();
        await().atMost(5, TimeUnit.SECONDS).until(() -> client.connected());
        TreeSet<String> side = new TreeSet<>(List.of("node-a"));
        TreeSet<String> expected = new TreeSet<>(List.of("node-a", "node-b"));
        long t0 = 1_000_000_000L;

        TieBreakVerdict first = client.controlPlaneTieBreaker().evaluate(side, expected, t0);
        assertThat(first.outcome()).isEqualTo(TieBreakVerdict.Outcome.NO_ANSWER);
        TieBreakRequest request = controller.tieBreaks.poll(5, TimeUnit.SECONDS);
        assertThat(request.getSideList()).containsExactly("node-a");
        assertThat(request.getEpoch()).isEqualTo("e1");
        controller.push(ControllerMessage.newBuilder().setEpoch("e1").setRevision(5)
                .setTieBreak(TieBreakGrant.newBuilder().setRequestId(request.getRequestId()).setGranted(true)
                        .setValidFor(com.google.protobuf.Duration.newBuilder().setSeconds(2)))
                .build());

        await().atMost(5, TimeUnit.SECONDS).until(() ->
                client.controlPlaneTieBreaker().evaluate(side, expected, t0 + 1).outcome()
                        == TieBreakVerdict.Outcome.WIN);
        assertThat(client.controlPlaneTieBreaker().evaluate(side, expected, t0 + 1_999_000_000L).outcome())
                .isEqualTo(TieBreakVerdict.Outcome.WIN);
        assertThat(client.controlPlaneTieBreaker().evaluate(side, expected, t0 + 2_000_000_000L).outcome())
                .isEqualTo(TieBreakVerdict.Outcome.NO_ANSWER);
    }

    @Test
    void controlPlaneTieBreakerLosesWhenTheOtherSideHoldsTheTieAndIsSilentWhenRefusedOtherwise()
            throws Exception {
        startServer();
        controller.onHello((hello, out) -> out.onNext(full("e1", 5, config("node-a", "node-b"))));
        newClient().start();
        await().atMost(5, TimeUnit.SECONDS).until(() -> client.connected());
        TreeSet<String> side = new TreeSet<>(List.of("node-a"));
        TreeSet<String> expected = new TreeSet<>(List.of("node-a", "node-b"));

        client.controlPlaneTieBreaker().evaluate(side, expected, 10);
        TieBreakRequest r1 = controller.tieBreaks.poll(5, TimeUnit.SECONDS);
        controller.push(refusal(r1, "not leader"));
        await().atMost(5, TimeUnit.SECONDS).until(() -> client.controlPlaneTieBreaker()
                .evaluate(side, expected, 20).reason().contains("not leader"));
        assertThat(client.controlPlaneTieBreaker().evaluate(side, expected, 30).outcome())
                .isEqualTo(TieBreakVerdict.Outcome.NO_ANSWER);

        TieBreakRequest r2 = controller.tieBreaks.poll(5, TimeUnit.SECONDS);
        controller.push(refusal(r2, ControlPlaneTieBreaker.HELD_BY_OTHER_SIDE_PREFIX + "node-b"));
        await().atMost(5, TimeUnit.SECONDS).until(() -> client.controlPlaneTieBreaker()
                .evaluate(side, expected, 40).outcome() == TieBreakVerdict.Outcome.LOSE);
    }

    @Test
    void controlPlaneTieBreakerHasNoAnswerWhileDisconnected() {
        newClient();
        TieBreakVerdict v = client.controlPlaneTieBreaker().evaluate(new TreeSet<>(List.of("node-a")),
                new TreeSet<>(List.of("node-a", "node-b")), 1);
        assertThat(v.outcome()).isEqualTo(TieBreakVerdict.Outcome.NO_ANSWER);
        assertThat(v.reason()).contains("not connected");
    }

    private static ControllerMessage refusal(TieBreakRequest request, String reason) {
        return ControllerMessage.newBuilder().setEpoch("e1").setRevision(5)
                .setTieBreak(TieBreakGrant.newBuilder().setRequestId(request.getRequestId()).setGranted(false)
                        .setReason(reason))
                .build();
    }
}
