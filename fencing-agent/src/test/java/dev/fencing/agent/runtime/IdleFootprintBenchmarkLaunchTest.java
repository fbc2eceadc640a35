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
}
