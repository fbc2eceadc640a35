package dev.fencing.agent.runtime;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

/**
 * Idle footprint of N=5 agents, each its own JVM started from the shaded jar, each feeding a FIFO that this benchmark
 * drains. After a warm-up it samples every agent's resident set (VmRSS), thread count and CPU time (utime+stime from
 * /proc) over a measurement window and prints them.
 *
 * <p>{@code footprint.mode} says how the agents get their group: {@code controller} (the default) as the DaemonSet
 * starts them — {@code run --controller} over TLS to a {@link FootprintController} in this JVM, with a token file and
 * {@code --metrics-port} — or {@code standalone}, a config file ({@code run --config}, no metrics port; the mode of
 * the figures before 2026-11-28). Both give the group the same members, policy and an AES-256 gossip key.
 *
 * <p>Arguments: {@code [JAR [N [WARMUP_S [MEASURE_S]]]]}. System properties choose the runtime, so the same
 * benchmark measures a JDK on the machine or the container image's own runtime:
 * <ul>
 *   <li>{@code footprint.java} — the java launcher (default {@code java} on the PATH, {@code /opt/java/bin/java}
 *       with {@code footprint.rootfs});
 *   <li>{@code footprint.options} — comma-separated java {@code @argfiles} (one option per line), passed before
 *       {@code -jar} as the image's entrypoint does; without it, and without {@code footprint.rootfs}, the
 *       {@link #SMALL_FOOTPRINT} flags;
 *   <li>{@code footprint.flags} — further options, space-separated, after the argfiles (to try one flag);
 *   <li>{@code footprint.env.NAME=VALUE} — environment variable NAME of every agent (the pod's
 *       {@code JAVA_TOOL_OPTIONS}, {@code MALLOC_ARENA_MAX});
 *   <li>{@code footprint.rootfs} — an unpacked image root: every agent runs {@code chroot}ed into it (needs root),
 *       the jar (default {@code /app/fencing-agent.jar}), launcher and argfiles (default {@code /app/jvm.options})
 *       are paths inside it, and the work directory is created under its {@code /tmp}.
 * </ul>
 *
 * <p>Run after {@code ./mvnw -o -pl fencing-agent package -DskipTests}:
 * {@code ./mvnw -o -pl fencing-agent exec:java -Dexec.classpathScope=test
 * -Dexec.mainClass=dev.fencing.agent.runtime.IdleFootprintBenchmark [-Dexec.args="JAR N WARMUP_S MEASURE_S"]}.
 */
public final class IdleFootprintBenchmark {

  /** JVM flags for a small idle footprint that every JDK from 17 on accepts (the jar-run default). */
  static final List<String> SMALL_FOOTPRINT = List.of("-Xss256k", "-XX:+UseSerialGC", "-Xms16m", "-Xmx64m",
      "-XX:MaxMetaspaceSize=64m", "-XX:ReservedCodeCacheSize=16m", "-XX:TieredStopAtLevel=1",
      "-XX:CICompilerCount=1", "-XX:+UseCompressedOops", "-Xshare:auto", "-XX:-UsePerfData");

  /** The image's entrypoint paths, used with {@code footprint.rootfs}. */
  static final String IMAGE_JAVA = "/opt/java/bin/java";
  static final String IMAGE_JAR = "/app/fencing-agent.jar";
  static final String IMAGE_OPTIONS = "/app/jvm.options";

  private static final String ENV_PREFIX = "footprint.env.";

  /** How the agents get their group. */
  enum Mode {
    /** From a controller over TLS, with a metrics port: what the DaemonSet runs. */
    CONTROLLER,
    /** From a config file ({@code run --config}). */
    STANDALONE;

    /** {@code footprint.mode}: controller (default) or standalone. */
    static Mode from(Properties properties) {
      String value = properties.getProperty("footprint.mode", "controller").trim();
      return switch (value) {
        case "controller" -> CONTROLLER;
        case "standalone" -> STANDALONE;
        default -> throw new IllegalArgumentException("footprint.mode must be controller or standalone, not '"
            + value + "'");
      };
    }
  }

  /**
   * Agent {@code i}'s own run directory under {@code runDir}, as each node has its own {@code /var/run/fencing-agent}:
   * the agent watches that directory for its disable file, so a shared one would wake every agent for the others'
   * status writes.
   */
  static Path nodeRunDir(Path runDir, int i) {
    return runDir.resolve("node-" + i);
  }

  /**
   * The arguments after the jar for agent {@code i}: the node's socket, disable and status files in its
   * {@link #nodeRunDir} under {@code runDir} (see {@link Launch#hostRunDir}), its FIFO and state dir under
   * {@code dir}, and either the config file {@code config} or the controller on 127.0.0.1:{@code controllerPort}
   * (certificate for localhost, CA and token in {@code dir}) with metrics on {@code metricsPort} and the loopback
   * probe listener on {@code probePort}, as the DaemonSet runs it.
   */
  static List<String> agentArgs(Mode mode, Launch launch, Path dir, Path runDir, int i, Path config,
                                int controllerPort, int metricsPort, int probePort) {
    List<String> args = new ArrayList<>(List.of("run"));
    if (mode == Mode.STANDALONE) {
      args.addAll(List.of("--config", launch.agentPath(config)));
    } else {
      args.addAll(List.of("--controller", "127.0.0.1:" + controllerPort, "--controller-server-name", "localhost",
          "--controller-ca", launch.agentPath(dir.resolve("ca.crt")), "--token-file",
          launch.agentPath(dir.resolve("token")), "--metrics-port", Integer.toString(metricsPort), "--probe-port",
          Integer.toString(probePort)));
    }
    Path run = nodeRunDir(runDir, i);
    args.addAll(List.of("--node", FootprintController.nodeName(i), "--socket",
        launch.agentPath(run.resolve("fencing.sock")), "--watchdog-device",
        launch.agentPath(dir.resolve("watchdog-" + i)), "--disable-file", launch.agentPath(run.resolve("disable")),
        "--status-file", launch.agentPath(run.resolve("status")), "--state-dir",
        launch.agentPath(dir.resolve("state-" + i))));
    return args;
  }

  /**
   * How every agent JVM is launched.
   *
   * @param rootfs the image root the agents are chrooted into, or null for the host
   * @param java the launcher (inside {@code rootfs} when set)
   * @param jvmOptions what comes between the launcher and {@code -jar}
   * @param jar the agent jar (inside {@code rootfs} when set)
   * @param env environment variables added to each agent's
   */
  record Launch(Path rootfs, String java, List<String> jvmOptions, String jar, Map<String, String> env) {

    /** The launch that {@code properties} and the JAR argument ({@code null} = the default) describe. */
    static Launch from(Properties properties, String jarArgument) {
      String root = properties.getProperty("footprint.rootfs");
      Path rootfs = root == null || root.isBlank() ? null : Path.of(root).toAbsolutePath();
      String java = properties.getProperty("footprint.java", rootfs == null ? "java" : IMAGE_JAVA);
      String optionFiles = properties.getProperty("footprint.options", rootfs == null ? "" : IMAGE_OPTIONS);
      List<String> options = new ArrayList<>();
      if (optionFiles.isBlank()) {
        options.addAll(SMALL_FOOTPRINT);
      } else {
        for (String file : optionFiles.split(",")) {
          if (!file.isBlank()) {
            options.add("@" + file.trim());
          }
        }
      }
      for (String flag : properties.getProperty("footprint.flags", "").trim().split("\\s+")) {
        if (!flag.isEmpty()) {
          options.add(flag);
        }
      }
      Map<String, String> env = new TreeMap<>();
      for (String name : properties.stringPropertyNames()) {
        if (name.startsWith(ENV_PREFIX) && name.length() > ENV_PREFIX.length()) {
          env.put(name.substring(ENV_PREFIX.length()), properties.getProperty(name));
        }
      }
      String jar = jarArgument != null ? jarArgument
          : rootfs != null ? IMAGE_JAR : "fencing-agent/target/fencing-agent-0.1.0-SNAPSHOT.jar";
      return new Launch(rootfs, java, List.copyOf(options), jar, Map.copyOf(env));
    }

    /**
     * Where the agents' work directory lives on the host: under the image root's /tmp when chrooted. A chrooted JVM
     * needs the root's /proc (the launcher finds libjli through /proc/self/exe) and /dev (SecureRandom), which a
     * container runtime would provide: without them this says how to mount them.
     */
    Path hostWorkDir() throws IOException {
      if (rootfs == null) {
        return Files.createTempDirectory("fencing-footprint");
      }
      if (!Files.exists(rootfs.resolve("proc/self")) || !Files.exists(rootfs.resolve("dev/urandom"))) {
        throw new IllegalStateException("the image root " + rootfs + " needs /proc and /dev for a chrooted JVM: mkdir -p "
            + rootfs + "/proc " + rootfs + "/dev && mount -t proc proc " + rootfs + "/proc && mount --rbind /dev "
            + rootfs + "/dev");
      }
      Path tmp = rootfs.resolve("tmp");
      Files.createDirectories(tmp);
      return Files.createTempDirectory(tmp, "fencing-footprint");
    }

    /**
     * Where the agents' socket, disable and status files live: on a node that is {@code /var/run/fencing-agent},
     * which is tmpfs, so here a directory under {@code shm} (a tmpfs, normally {@code /dev/shm}) when it is one; the
     * work directory when chrooted or when {@code shm} is missing. On a disk file system every status refresh would
     * cost two fsyncs that a node does not pay.
     */
    Path hostRunDir(Path workDir, Path shm) throws IOException {
      if (rootfs != null || !Files.isDirectory(shm) || !Files.isWritable(shm)) {
        return workDir;
      }
      return Files.createTempDirectory(shm, "fencing-footprint-run");
    }

    /** {@code hostPath} as the agent sees it. */
    String agentPath(Path hostPath) {
      return rootfs == null ? hostPath.toString() : "/" + rootfs.relativize(hostPath.toAbsolutePath());
    }

    /** The command line of one agent, {@code agentArgs} being the arguments after the jar. */
    List<String> command(List<String> agentArgs) {
      List<String> command = new ArrayList<>();
      if (rootfs != null) {
        // chroot execs the launcher: the process started is the JVM itself, so /proc/<pid> measures the agent.
        command.addAll(List.of("chroot", rootfs.toString()));
      }
      command.add(java);
      command.addAll(jvmOptions);
      command.addAll(List.of("-jar", jar));
      command.addAll(agentArgs);
      return command;
    }
  }

  private IdleFootprintBenchmark() {}

  public static void main(String[] args) throws Exception {
    Launch launch = Launch.from(System.getProperties(), args.length > 0 ? args[0] : null);
    if (launch.rootfs() == null && !Files.exists(Path.of(launch.jar()))) {
      Path local = Path.of("target").resolve(Path.of(launch.jar()).getFileName());
      launch = new Launch(null, launch.java(), launch.jvmOptions(), local.toString(), launch.env());
    }
    int n = args.length > 1 ? Integer.parseInt(args[1]) : 5;
    int warmupSeconds = args.length > 2 ? Integer.parseInt(args[2]) : 20;
    int measureSeconds = args.length > 3 ? Integer.parseInt(args[3]) : 30;
    Mode mode = Mode.from(System.getProperties());
    Path dir = launch.hostWorkDir();
    Path runDir = launch.hostRunDir(dir, Path.of("/dev/shm"));
    byte[] key = new byte[32];
    new java.security.SecureRandom().nextBytes(key);
    List<Integer> ports = LoopbackPorts.distinct(3 * n);
    List<Integer> gossipPorts = ports.subList(0, n);
    Path config = dir.resolve("cluster.yaml");
    FootprintController controller = null;
    if (mode == Mode.CONTROLLER) {
      controller = new FootprintController(gossipPorts, key).start(dir);
    } else {
      Files.writeString(config, FootprintController.groupYaml(gossipPorts, key));
    }
    int controllerPort = controller == null ? -1 : controller.port();
    List<Process> agents = new ArrayList<>();
    try {
      for (int i = 0; i < n; i++) {
        Path fifo = dir.resolve("watchdog-" + i);
        new ProcessBuilder("mkfifo", fifo.toString()).inheritIO().start().waitFor();
        drain(fifo);
        Files.createDirectories(nodeRunDir(runDir, i));
        List<String> command = launch.command(agentArgs(mode, launch, dir, runDir, i, config, controllerPort,
            ports.get(n + i), ports.get(2 * n + i)));
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
            .redirectOutput(dir.resolve("agent-" + i + ".log").toFile());
        builder.environment().putAll(launch.env());
        agents.add(builder.start());
      }
      Thread.sleep(warmupSeconds * 1000L);
      long[] cpuBefore = new long[n];
      long[] runBefore = new long[n];
      for (int i = 0; i < n; i++) {
        cpuBefore[i] = cpuTicks(agents.get(i).pid());
        runBefore[i] = runNanos(agents.get(i).pid());
      }
      Thread.sleep(measureSeconds * 1000L);
      double totalRss = 0;
      double totalCpu = 0;
      double totalAnon = 0;
      double totalRun = 0;
      System.out.printf("mode: %s; command: %s%n", mode.name().toLowerCase(java.util.Locale.ROOT),
          String.join(" ", launch.command(agentArgs(mode, launch, dir, runDir, 0, config, controllerPort,
              ports.get(n), ports.get(2 * n)))));
      // The work directory stays for a look at the agents' logs; it is the caller's to delete.
      System.out.printf("agent logs and state (kept): %s%n", dir);
      if (controller != null) {
        System.out.printf("controller: hello from %d of %d agents, %d streams, %d reports%n",
            controller.helloFrom().size(), n, controller.hellos(), controller.reports());
        if (controller.hellos() > n) {
          System.out.printf("WARNING: %d reconnects to the controller during the run; the figures include them%n",
              controller.hellos() - n);
        }
      }
      System.out.printf("environment: %s%n", launch.env());
      for (int i = 0; i < n; i++) {
        long pid = agents.get(i).pid();
        double rssMiB = statusKiB(pid, "VmRSS:") / 1024.0;
        double anonMiB = statusKiB(pid, "RssAnon:") / 1024.0;
        double fileMiB = statusKiB(pid, "RssFile:") / 1024.0;
        double cpuPercent = (cpuTicks(pid) - cpuBefore[i]) / 100.0 / measureSeconds * 100;
        double runPercent = (runNanos(pid) - runBefore[i]) / 1e9 / measureSeconds * 100;
        long threads;
        try (var tasks = Files.list(Path.of("/proc/" + pid + "/task"))) {
          threads = tasks.count();
        }
        boolean armed = Files.readString(dir.resolve("agent-" + i + ".log")).contains("event=armed");
        totalRss += rssMiB;
        totalCpu += cpuPercent;
        totalRun += runPercent;
        totalAnon += anonMiB;
        System.out.printf("node-%d: RSS %.1f MiB (anonymous %.1f, file-backed %.1f), CPU %.2f%% of one core over %ds"
            + " (scheduler run time %.2f%%), threads %d, armed=%s%n", i, rssMiB, anonMiB, fileMiB, cpuPercent,
            measureSeconds, runPercent, threads, armed);
      }
      System.out.printf("N=%d idle agents: mean RSS %.1f MiB (anonymous %.1f), mean CPU %.2f%% of one core"
          + " (scheduler run time %.2f%%)%n", n, totalRss / n, totalAnon / n, totalCpu / n, totalRun / n);
    } finally {
      for (Process p : agents) {
        p.destroy();
      }
      for (Process p : agents) {
        p.waitFor();
      }
      if (controller != null) {
        controller.close();
      }
      if (!runDir.equals(dir)) {
        try (var files = Files.walk(runDir)) {
          for (Path p : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
            Files.deleteIfExists(p);
          }
        }
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

  /** A size field of /proc/PID/status ({@code VmRSS:}, {@code RssAnon:}, {@code RssFile:}) in KiB, -1 if absent. */
  private static long statusKiB(long pid, String field) throws IOException {
    for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"), StandardCharsets.US_ASCII)) {
      if (line.startsWith(field)) {
        return Long.parseLong(line.replaceAll("[^0-9]", ""));
      }
    }
    return -1;
  }

  /**
   * Time on a CPU in nanoseconds, summed over the process's live threads ({@code /proc/PID/task/TID/schedstat}, first
   * field): exact, where utime+stime are sampled at the clock tick and an idle agent's wakeups are much shorter than
   * a tick. Threads that ended within the window are missing (an idle agent starts none).
   */
  private static long runNanos(long pid) throws IOException {
    long sum = 0;
    try (var tasks = Files.list(Path.of("/proc/" + pid + "/task"))) {
      for (Path task : (Iterable<Path>) tasks::iterator) {
        try {
          String stat = Files.readString(task.resolve("schedstat")).trim();
          sum += Long.parseLong(stat.substring(0, stat.indexOf(' ')));
        } catch (IOException | RuntimeException e) {
          // The thread ended between the listing and the read.
        }
      }
    }
    return sum;
  }

  /** utime + stime in clock ticks (USER_HZ = 100 on Linux). */
  private static long cpuTicks(long pid) throws IOException {
    String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
    String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
    return Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
  }
}
