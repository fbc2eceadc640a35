package dev.fencing.agent.runtime;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Idle footprint of N=5 standalone agents, each its own JVM started from the shaded jar with the small-footprint
 * flags below, each feeding a FIFO that this benchmark drains. After a warm-up it samples every agent's resident set
 * (VmRSS) and CPU time (utime+stime from /proc) over a measurement window and prints them.
 *
 * Run after {@code ./mvnw -o -pl fencing-agent package -DskipTests}:
 * {@code ./mvnw -o -pl fencing-agent exec:java -Dexec.classpathScope=test
 * -Dexec.mainClass=dev.fencing.agent.runtime.IdleFootprintBenchmark [-Dexec.args="JAR N WARMUP_S MEASURE_S"]}.
 */
public final class IdleFootprintBenchmark {

  /** JVM flags documented in fencing-agent/README.md for a small idle footprint. */
  static final List<String> SMALL_FOOTPRINT = List.of("-Xss256k", "-XX:+UseSerialGC", "-Xms16m", "-Xmx64m",
      "-XX:MaxMetaspaceSize=64m", "-XX:ReservedCodeCacheSize=16m", "-XX:TieredStopAtLevel=1",
      "-XX:CICompilerCount=1", "-XX:+UseCompressedOops", "-Xshare:auto", "-XX:-UsePerfData");

  private IdleFootprintBenchmark() {}

  public static void main(String[] args) throws Exception {
    Path jar = Path.of(args.length > 0 ? args[0] : "fencing-agent/target/fencing-agent-0.1.0-SNAPSHOT.jar");
    if (!Files.exists(jar)) {
      jar = Path.of("target").resolve(jar.getFileName());
    }
    int n = args.length > 1 ? Integer.parseInt(args[1]) : 5;
    int warmupSeconds = args.length > 2 ? Integer.parseInt(args[2]) : 20;
    int measureSeconds = args.length > 3 ? Integer.parseInt(args[3]) : 30;
    Path dir = Files.createTempDirectory("fencing-footprint");
    byte[] key = new byte[32];
    new java.security.SecureRandom().nextBytes(key);
    // Encrypted like a real group (an agent without a keyring would not arm).
    StringBuilder yaml = new StringBuilder("group: footprint\ngossip: {keys: [\""
        + java.util.Base64.getEncoder().encodeToString(key) + "\"]}\nexpected:\n");
    for (int i = 0; i < n; i++) {
      yaml.append("  - {name: node-").append(i).append(", address: 127.0.0.1:").append(LoopbackPorts.free()).append("}\n");
    }
    yaml.append("fencing:\n  watchdog: {timeout: 60s}\n  quorum: {tieBreakers: [LowestName]}\n");
    Path config = dir.resolve("cluster.yaml");
    Files.writeString(config, yaml);
    List<Process> agents = new ArrayList<>();
    try {
      for (int i = 0; i < n; i++) {
        Path fifo = dir.resolve("watchdog-" + i);
        new ProcessBuilder("mkfifo", fifo.toString()).inheritIO().start().waitFor();
        drain(fifo);
        List<String> command = new ArrayList<>(List.of("java"));
        command.addAll(SMALL_FOOTPRINT);
        command.addAll(List.of("-jar", jar.toString(), "run", "--config", config.toString(), "--node", "node-" + i,
            "--socket", dir.resolve("agent-" + i + ".sock").toString(), "--watchdog-device", fifo.toString(),
            "--disable-file", dir.resolve("disable-" + i).toString(), "--state-dir",
            dir.resolve("state-" + i).toString()));
        agents.add(new ProcessBuilder(command).redirectErrorStream(true)
            .redirectOutput(dir.resolve("agent-" + i + ".log").toFile()).start());
      }
      Thread.sleep(warmupSeconds * 1000L);
      long[] cpuBefore = new long[n];
      for (int i = 0; i < n; i++) {
        cpuBefore[i] = cpuTicks(agents.get(i).pid());
      }
      Thread.sleep(measureSeconds * 1000L);
      double totalRss = 0;
      double totalCpu = 0;
      System.out.printf("flags: %s%n", String.join(" ", SMALL_FOOTPRINT));
      for (int i = 0; i < n; i++) {
        long pid = agents.get(i).pid();
        double rssMiB = rssKiB(pid) / 1024.0;
        double cpuPercent = (cpuTicks(pid) - cpuBefore[i]) / 100.0 / measureSeconds * 100;
        boolean armed = Files.readString(dir.resolve("agent-" + i + ".log")).contains("event=armed");
        totalRss += rssMiB;
        totalCpu += cpuPercent;
        System.out.printf("node-%d: RSS %.1f MiB, CPU %.2f%% of one core over %ds, armed=%s%n", i, rssMiB,
            cpuPercent, measureSeconds, armed);
      }
      System.out.printf("N=%d idle agents: mean RSS %.1f MiB, mean CPU %.2f%% of one core%n", n, totalRss / n,
          totalCpu / n);
    } finally {
      for (Process p : agents) {
        p.destroy();
      }
      for (Process p : agents) {
        p.waitFor();
      }
    }
  }

  private static void drain(Path fifo) {
    Thread t = new Thread(() -> {
      byte[] buffer = new byte[256];
      while (true) {
        try (InputStream in = Files.newInputStream(fifo)) {
          while (in.read(buffer) >= 0) {
            // The bytes are keepalives; only their arrival matters.
          }
        } catch (IOException e) {
          return;
        }
      }
    }, "drain-" + fifo.getFileName());
    t.setDaemon(true);
    t.start();
  }

  private static long rssKiB(long pid) throws IOException {
    for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"), StandardCharsets.US_ASCII)) {
      if (line.startsWith("VmRSS:")) {
        return Long.parseLong(line.replaceAll("[^0-9]", ""));
      }
    }
    return -1;
  }

  /** utime + stime in clock ticks (USER_HZ = 100 on Linux). */
  private static long cpuTicks(long pid) throws IOException {
    String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
    String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
    return Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
  }
}
