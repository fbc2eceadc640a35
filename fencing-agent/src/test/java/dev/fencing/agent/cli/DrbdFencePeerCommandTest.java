package dev.fencing.agent.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.proto.fencing.v1.AgentStatus;
import dev.fencing.proto.fencing.v1.PeerMemberState;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code fencing-agent drbd-fence-peer} against a real local API server with a fake peer state: in-process, and run
 * by Debian's drbdadm (drbd-utils) as the fence-peer handler of a drbd.conf, without the DRBD kernel module.
 */
class DrbdFencePeerCommandTest {

  private static final Path DRBDADM = Path.of("/usr/sbin/drbdadm");

  @TempDir Path dir;
  @RegisterExtension final FakeAgentApi agent = new FakeAgentApi();

  private CliRun handler(Map<String, String> env, String... args) {
    DrbdFencePeerCommand command = new DrbdFencePeerCommand();
    command.environment = env;
    String[] all = new String[args.length + 2];
    all[0] = "--socket";
    all[1] = agent.socket().toString();
    System.arraycopy(args, 0, all, 2, args.length);
    return CliRun.of(command, all);
  }

  private static Map<String, String> drbd9() {
    return Map.of("DRBD_RESOURCE", "r0", "DRBD_PEER_NODE_ID", "1", "DRBD_NODE_ID_0", "alpha",
        "DRBD_NODE_ID_1", "beta");
  }

  @Test
  void answersFencedForAPeerGonePastTheSafeDelay() {
    agent.status.set(DrbdFencePeerTest.alphaSeeing(PeerMemberState.PEER_MEMBER_STATE_LEFT, 69, false));
    CliRun run = handler(drbd9());
    assertThat(run.code()).isEqualTo(7);
    assertThat(run.err())
        .startsWith("drbd-fence-peer: resource=r0 peer=beta: fenced: beta (Left, last heard 1m9s ago)");
  }

  @Test
  void waitsForAGonePeersSafeDelayAndGivesUpAtTheTimeout() {
    // 67.8 s of a 68 s delay: 200 ms to go, within the timeout; the fake agent's view never moves on, so the wait
    // ends once the 200 ms no longer fit before the timeout
    AgentStatus status = DrbdFencePeerTest.alphaSeeing(PeerMemberState.PEER_MEMBER_STATE_DEAD, 60, false);
    agent.status.set(status.toBuilder().setPeers(0, status.getPeers(0).toBuilder()
        .setSinceLastHeard(com.google.protobuf.Duration.newBuilder().setSeconds(67).setNanos(800_000_000))).build());
    CliRun run = handler(drbd9(), "--timeout", "2s", "--poll-interval", "100ms");
    assertThat(run.code()).isEqualTo(1);
    assertThat(run.err()).contains("not fenced yet").contains("(200 ms to go)")
        .contains("gave up: that is beyond --timeout 2s");
    assertThat(agent.statusCalls.get()).as("asked again while waiting").isGreaterThan(2);
  }

  /** A peer that is Suspect, not gone, has no delay running out: the handler asks until its timeout. */
  @Test
  @Timeout(30) // a handler that never gives up would hang here
  void aSuspectPeerIsWaitedForUntilTheTimeout() {
    agent.status.set(DrbdFencePeerTest.alphaSeeing(PeerMemberState.PEER_MEMBER_STATE_SUSPECT, 100, false));
    CliRun run = handler(drbd9(), "--timeout", "500ms", "--poll-interval", "100ms");
    assertThat(run.code()).isEqualTo(1);
    assertThat(run.err()).contains("not fenced yet").contains("gave up after --timeout 500ms");
    assertThat(agent.statusCalls.get()).isBetween(2, 6);
  }

  /** A delay that runs out only after the timeout is not waited for: DRBD hears at once that it must be raised. */
  @Test
  void aDelayThatCannotPassWithinTheTimeoutIsGivenUpAtOnce() {
    agent.status.set(DrbdFencePeerTest.alphaSeeing(PeerMemberState.PEER_MEMBER_STATE_DEAD, 60, false));
    CliRun run = handler(drbd9(), "--timeout", "5s", "--poll-interval", "100ms");
    assertThat(run.code()).isEqualTo(1);
    assertThat(run.err()).contains("not fenced yet").contains("(8000 ms to go)")
        .contains("gave up: that is beyond --timeout 5s (raise --timeout above the group's"
            + " safe-to-assume-fenced delay)");
    assertThat(agent.statusCalls.get()).as("asked once").isEqualTo(1);
  }

  @Test
  void aPeerStillHeardOrNoAgentIsNotFencedAndBadInputIsNeverADrbdAnswer() {
    agent.status.set(DrbdFencePeerTest.alphaSeeing(PeerMemberState.PEER_MEMBER_STATE_ALIVE, 0, true));
    assertThat(handler(drbd9()).code()).isEqualTo(1);

    DrbdFencePeerCommand command = new DrbdFencePeerCommand();
    command.environment = drbd9();
    CliRun none = CliRun.of(command, "--socket", dir.resolve("absent.sock").toString());
    assertThat(none.code()).isEqualTo(1);
    assertThat(none.err()).contains("no agent");

    // 2 (picocli's usual) would be "helper broken" to DRBD; 3 to 6 would claim a disk state.
    assertThat(handler(drbd9(), "--timeout", "soon").code()).isEqualTo(1);
    assertThat(handler(drbd9(), "--no-such-option").code()).isEqualTo(1);
  }

  /** drbdadm reads the drbd.conf and runs the handler with the environment of the fence-peer contract. */
  private ProcessResult drbdadmFencePeer(String peerNodeId) throws Exception {
    assertThat(DRBDADM).as("Debian's drbd-utils (scripts/test installs it)").isExecutable();
    String host = Files.readString(Path.of("/proc/sys/kernel/hostname")).trim();
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Path handler = dir.resolve("fence-peer.sh");
    // The handler line as a node would have it (fencing-agent drbd-fence-peer), with this test's JVM and class path.
    Files.writeString(handler, "#!/bin/sh\nexec '" + java + "' -cp '" + System.getProperty("java.class.path")
        + "' dev.fencing.agent.cli.FencingAgentCli drbd-fence-peer --socket '" + agent.socket() + "' --timeout 5s\n");
    Files.setPosixFilePermissions(handler, PosixFilePermissions.fromString("rwx------"));
    Path conf = dir.resolve("drbd.conf");
    Files.writeString(conf, """
        resource r0 {
          handlers { fence-peer "%s"; }
          net { fencing resource-and-stonith; }
          on %s { node-id 0; device /dev/drbd100; disk /dev/loop100; address 198.18.5.1:7789; meta-disk internal; }
          on beta { node-id 1; device /dev/drbd100; disk /dev/loop101; address 198.18.5.2:7789; meta-disk internal; }
        }
        """.formatted(handler, host));
    // What the kernel does when a disconnected primary must fence: run "drbdadm fence-peer <resource>" with the
    // peer's node id in the environment; drbdadm adds DRBD_RESOURCE, DRBD_NODE_ID_<id>, ... and runs the handler.
    ProcessBuilder pb = new ProcessBuilder(DRBDADM.toString(), "-c", conf.toString(), "fence-peer", "r0");
    Map<String, String> env = pb.environment();
    env.put("DRBD_PEER_NODE_ID", peerNodeId);
    env.put("DRBD_PEER_ADDRESS", "198.18.5.2");
    env.put("DRBD_PEER_AF", "ipv4");
    pb.redirectOutput(ProcessBuilder.Redirect.PIPE).redirectErrorStream(true);
    Process p = pb.start();
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("drbdadm and its handler finish").isTrue();
    return new ProcessResult(p.exitValue(), new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
  }

  record ProcessResult(int code, String output) {}

  @Test
  void drbdadmRunsItAsTheFencePeerHandlerAndPassesItsAnswerOn() throws Exception {
    agent.status.set(DrbdFencePeerTest.alphaSeeing(PeerMemberState.PEER_MEMBER_STATE_DEAD, 100, false));
    ProcessResult fenced = drbdadmFencePeer("1");
    System.out.println("drbdadm fence-peer r0 (peer beta DEAD for 100s): exit " + fenced.code() + "\n"
        + fenced.output());
    assertThat(fenced.code()).isEqualTo(7);
    assertThat(fenced.output()).contains("drbd-fence-peer: resource=r0 peer=beta (198.18.5.2): fenced: beta");

    agent.status.set(DrbdFencePeerTest.alphaSeeing(PeerMemberState.PEER_MEMBER_STATE_ALIVE, 0, true));
    ProcessResult alive = drbdadmFencePeer("1");
    System.out.println("drbdadm fence-peer r0 (peer beta alive): exit " + alive.code() + "\n" + alive.output());
    assertThat(alive.code()).isEqualTo(1);
    assertThat(alive.output()).contains("not fenced: peer beta is alive");
    assertThat(List.of(fenced.output(), alive.output())).noneMatch(o -> o.contains("Exception"));
  }
}
