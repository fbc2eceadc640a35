package dev.fencing.agent.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.List;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The benchmark measures the runtime it is told to: the machine's JDK, or the image's root and entrypoint. */
class IdleFootprintBenchmarkLaunchTest {

  @Test
  void withoutPropertiesTheMachinesJavaRunsTheJarWithTheSmallFootprintFlags() {
    IdleFootprintBenchmark.Launch launch = IdleFootprintBenchmark.Launch.from(new Properties(), "agent.jar");

    assertThat(launch.command(List.of("run"))).startsWith("java")
        .containsSubsequence(IdleFootprintBenchmark.SMALL_FOOTPRINT).endsWith("-jar", "agent.jar", "run");
    assertThat(launch.env()).isEmpty();
  }

  @Test
  void argfilesFlagsAndEnvironmentComeFromProperties() {
    Properties p = new Properties();
    p.setProperty("footprint.java", "/jdk/bin/java");
    p.setProperty("footprint.options", "a.options, b.options");
    p.setProperty("footprint.flags", " -XX:+UseCompactObjectHeaders  -Xmn4m ");
    p.setProperty("footprint.env.MALLOC_ARENA_MAX", "2");
    p.setProperty("footprint.env.JAVA_TOOL_OPTIONS", "-Xmx64m -Xss256k");

    IdleFootprintBenchmark.Launch launch = IdleFootprintBenchmark.Launch.from(p, "agent.jar");

    assertThat(launch.command(List.of("run"))).containsExactly("/jdk/bin/java", "@a.options", "@b.options",
        "-XX:+UseCompactObjectHeaders", "-Xmn4m", "-jar", "agent.jar", "run");
    assertThat(launch.env()).containsEntry("MALLOC_ARENA_MAX", "2")
        .containsEntry("JAVA_TOOL_OPTIONS", "-Xmx64m -Xss256k").hasSize(2);
  }

  @Test
  void anImageRootRunsTheImagesEntrypointChrootedWithPathsInsideTheRoot() {
    Properties p = new Properties();
    p.setProperty("footprint.rootfs", "/images/agent/rootfs");

    IdleFootprintBenchmark.Launch launch = IdleFootprintBenchmark.Launch.from(p, null);

    assertThat(launch.command(List.of("run"))).containsExactly("chroot", "/images/agent/rootfs",
        "/opt/java/bin/java", "@/app/jvm.options", "-jar", "/app/fencing-agent.jar", "run");
    assertThat(launch.agentPath(Path.of("/images/agent/rootfs/tmp/fp1/cluster.yaml")))
        .isEqualTo("/tmp/fp1/cluster.yaml");
  }

  @Test
  void anImageRootWithoutProcIsRefusedWithTheMountCommands(@TempDir Path root) {
    Properties p = new Properties();
    p.setProperty("footprint.rootfs", root.toString());

    IdleFootprintBenchmark.Launch launch = IdleFootprintBenchmark.Launch.from(p, null);

    assertThatThrownBy(launch::hostWorkDir).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("mount -t proc proc " + root + "/proc");
  }

  @Test
  void theAgentsRunAsTheDaemonSetStartsThemUnlessStandaloneIsAsked() {
    Properties p = new Properties();
    assertThat(IdleFootprintBenchmark.Mode.from(p)).isEqualTo(IdleFootprintBenchmark.Mode.CONTROLLER);
    p.setProperty("footprint.mode", "standalone");
    assertThat(IdleFootprintBenchmark.Mode.from(p)).isEqualTo(IdleFootprintBenchmark.Mode.STANDALONE);
    p.setProperty("footprint.mode", "Controler");
    assertThatThrownBy(() -> IdleFootprintBenchmark.Mode.from(p)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("controller or standalone").hasMessageContaining("Controler");
  }

  @Test
  void controllerModeArgumentsNameTheControllerItsCaTokenAndAMetricsPortInsideTheImageRoot() {
    Properties p = new Properties();
    p.setProperty("footprint.rootfs", "/images/agent/rootfs");
    IdleFootprintBenchmark.Launch launch = IdleFootprintBenchmark.Launch.from(p, null);
    Path dir = Path.of("/images/agent/rootfs/tmp/fp1");

    List<String> controller = IdleFootprintBenchmark.agentArgs(IdleFootprintBenchmark.Mode.CONTROLLER, launch, dir,
        dir, 3, dir.resolve("cluster.yaml"), 4000, 9103, 9104);
    assertThat(controller).startsWith("run").doesNotContain("--config")
        .containsSubsequence("--controller", "127.0.0.1:4000")
        .containsSubsequence("--controller-server-name", "localhost")
        .containsSubsequence("--controller-ca", "/tmp/fp1/ca.crt")
        .containsSubsequence("--token-file", "/tmp/fp1/token")
        .containsSubsequence("--metrics-port", "9103")
        .containsSubsequence("--probe-port", "9104")
        .containsSubsequence("--node", "node-3")
        .containsSubsequence("--watchdog-device", "/tmp/fp1/watchdog-3")
        .containsSubsequence("--status-file", "/tmp/fp1/node-3/status");

    List<String> standalone = IdleFootprintBenchmark.agentArgs(IdleFootprintBenchmark.Mode.STANDALONE, launch, dir,
        dir, 3, dir.resolve("cluster.yaml"), -1, 9103, 9104);
    assertThat(standalone).containsSubsequence("run", "--config", "/tmp/fp1/cluster.yaml")
        .doesNotContain("--controller", "--metrics-port", "--probe-port").containsSubsequence("--node", "node-3");
  }

  @Test
  void onTheHostTheRunFilesGoToTmpfsAsOnANodeAndTheStateDirStaysInTheWorkDir(@TempDir Path work,
      @TempDir Path shm) throws Exception {
    IdleFootprintBenchmark.Launch launch = IdleFootprintBenchmark.Launch.from(new Properties(), "agent.jar");

    Path runDir = launch.hostRunDir(work, shm);
    assertThat(runDir.getParent()).isEqualTo(shm);
    List<String> args = IdleFootprintBenchmark.agentArgs(IdleFootprintBenchmark.Mode.CONTROLLER, launch, work,
        runDir, 1, work.resolve("cluster.yaml"), 4000, 9103, 9104);
    // Each node its own directory, as /var/run/fencing-agent is on each node.
    Path node = runDir.resolve("node-1");
    assertThat(IdleFootprintBenchmark.nodeRunDir(runDir, 1)).isEqualTo(node);
    assertThat(args).containsSubsequence("--socket", node.resolve("fencing.sock").toString())
        .containsSubsequence("--disable-file", node.resolve("disable").toString())
        .containsSubsequence("--status-file", node.resolve("status").toString())
        .containsSubsequence("--state-dir", work.resolve("state-1").toString())
        .containsSubsequence("--watchdog-device", work.resolve("watchdog-1").toString());

    assertThat(launch.hostRunDir(work, shm.resolve("missing"))).isEqualTo(work);
    Properties chrooted = new Properties();
    chrooted.setProperty("footprint.rootfs", "/images/agent/rootfs");
    assertThat(IdleFootprintBenchmark.Launch.from(chrooted, null).hostRunDir(work, shm)).isEqualTo(work);
  }
}
