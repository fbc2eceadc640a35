package dev.fencing.kubetest;

import io.fabric8.kubernetes.api.model.authentication.BoundObjectReferenceBuilder;
import io.fabric8.kubernetes.api.model.authentication.TokenRequest;
import io.fabric8.kubernetes.api.model.authentication.TokenRequestBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.io.File;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A real Kubernetes control plane for tests, the lab and the demo: etcd, kube-apiserver and optionally
 * kube-controller-manager and kube-scheduler, built from Go modules by {@code scripts/kube-binaries}
 * ({@link KubeBinaries}), started with generated certificates ({@link KubePki}), service-account signing keys, the
 * Node and RBAC authorizers and the NodeRestriction admission plugin on top of the default admission chain.
 *
 * <p>By default every component listens on loopback (free ports). With {@link Builder#networkNamespace} they run
 * inside that network namespace instead (the API server on {@code address:6443}, as lab nodes see it) and the test
 * JVM reaches the API server through a {@link LoopbackRelay} on 127.0.0.1.
 *
 * <p>{@link #close()} stops everything and deletes the run's data; a JVM shutdown hook does the same, and a run whose
 * JVM was killed is swept by the next {@link Builder#start()} ({@link ControlPlaneRuns}).
 */
public final class RealControlPlane implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(RealControlPlane.class);
    public static final String SERVICE_ACCOUNT_ISSUER = "https://kubernetes.default.svc.cluster.local";
    public static final String SERVICE_CIDR = "10.96.0.0/16";
    public static final int NAMESPACED_API_PORT = 6443;
    private static final Duration START_TIMEOUT = Duration.ofSeconds(120);
    private static final Duration STOP_GRACE = Duration.ofSeconds(10);
    private static final AtomicLong NAMES = new AtomicLong();

    private final Builder settings;
    private final String runId;
    private final Path runDir;
    private final Path logDir;
    private final List<Component> components = new ArrayList<>();
    private final Thread shutdownHook;
    private KubePki pki;
    private Path binaries;
    private LoopbackRelay relay;
    private String url;
    private String inClusterUrl;
    private KubernetesClient admin;
    private boolean closed;

    /** One started process of the control plane. */
    private record Component(String name, Process process, Path log) {
    }

    private RealControlPlane(Builder settings) {
        this.settings = settings;
        this.runId = settings.name.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9-]", "-") + "-"
                + Long.toString(System.currentTimeMillis() % 1_000_000_000L, 36)
                + Integer.toString(ThreadLocalRandom.current().nextInt(36 * 36), 36);
        this.runDir = ControlPlaneRuns.claim(runId);
        this.logDir = settings.logDir.resolve(runId);
        this.shutdownHook = new Thread(this::close, "kube-control-plane-shutdown-" + runId);
    }

    /** @return a builder with the defaults: API server and etcd on loopback, no controllers */
    public static Builder builder() {
        return new Builder();
    }

    /** Settings of a control plane. */
    public static final class Builder {
        private String name = "kube";
        private boolean controllerManager;
        private boolean scheduler;
        private final List<String> controllerManagerArgs = new ArrayList<>();
        private final List<String> apiServerArgs = new ArrayList<>();
        private String netns;
        private String address = "127.0.0.1";
        private Path logDir = Path.of("target", "kube-logs");

        private Builder() {
        }

        /** Names the run (log directory, run id). */
        public Builder name(String value) {
            this.name = value;
            return this;
        }

        /** Also run kube-controller-manager (garbage collector, DaemonSets, node lifecycle, service accounts). */
        public Builder controllerManager(boolean value) {
            this.controllerManager = value;
            return this;
        }

        /** Also run kube-scheduler (binds pods, e.g. a DaemonSet's, to Nodes). */
        public Builder scheduler(boolean value) {
            this.scheduler = value;
            return this;
        }

        /** Extra kube-controller-manager flags, after the defaults (a later flag wins). */
        public Builder controllerManagerArgs(String... args) {
            this.controllerManagerArgs.addAll(List.of(args));
            return this;
        }

        /** Extra kube-apiserver flags, after the defaults. */
        public Builder apiServerArgs(String... args) {
            this.apiServerArgs.addAll(List.of(args));
            return this;
        }

        /** Runs every component inside {@code namespace}, the API server on {@code address:6443}. */
        public Builder networkNamespace(String namespace, String address) {
            this.netns = namespace;
            this.address = address;
            return this;
        }

        /** Where the components' logs go (one sub-directory per run). */
        public Builder logDir(Path value) {
            this.logDir = value;
            return this;
        }

        /**
         * Starts the control plane and waits until the API server is ready (and the controller manager serves).
         *
         * @throws IllegalStateException when a component does not start; whatever started is stopped again
         */
        public RealControlPlane start() {
            ControlPlaneRuns.sweepAbandoned();
            RealControlPlane plane = new RealControlPlane(this);
            try {
                plane.startAll();
            } catch (RuntimeException e) {
                plane.close();
                throw e;
            }
            return plane;
        }
    }

    // ---- start --------------------------------------------------------------------------------------------------

    private void startAll() {
        long started = System.nanoTime();
        Runtime.getRuntime().addShutdownHook(shutdownHook);
        binaries = KubeBinaries.locate();
        pki = KubePki.create(runDir.resolve("pki"));
        try {
            Files.createDirectories(logDir);
        } catch (IOException e) {
            throw new IllegalStateException("cannot create " + logDir + ": " + e.getMessage(), e);
        }
        boolean namespaced = settings.netns != null;
        int etcdClient = namespaced ? 2379 : freePort();
        int etcdPeer = namespaced ? 2380 : freePort();
        int apiPort = namespaced ? NAMESPACED_API_PORT : freePort();
        inClusterUrl = "https://" + settings.address + ":" + apiPort;

        List<String> serviceNames = List.of("kubernetes", "kubernetes.default", "kubernetes.default.svc",
                "kubernetes.default.svc.cluster.local", "localhost");
        KubePki.Pair serving = pki.serving("apiserver", "kube-apiserver", serviceNames,
                List.of("127.0.0.1", settings.address, "10.96.0.1"));

        String etcdUrl = "http://127.0.0.1:" + etcdClient;
        String peerUrl = "http://127.0.0.1:" + etcdPeer;
        launch("etcd", List.of(binaries.resolve("etcd").toString(),
                "--name=control-plane",
                "--data-dir=" + runDir.resolve("etcd"),
                "--listen-client-urls=" + etcdUrl,
                "--advertise-client-urls=" + etcdUrl,
                "--listen-peer-urls=" + peerUrl,
                "--initial-advertise-peer-urls=" + peerUrl,
                "--initial-cluster=control-plane=" + peerUrl,
                // the data is thrown away after the run: no fsync, smaller backend
                "--unsafe-no-fsync=true",
                "--quota-backend-bytes=" + (512L << 20),
                "--log-level=warn"));

        List<String> api = new ArrayList<>(List.of(binaries.resolve("kube-apiserver").toString(),
                "--etcd-servers=" + etcdUrl,
                "--bind-address=" + settings.address,
                "--advertise-address=" + settings.address,
                "--secure-port=" + apiPort,
                "--cert-dir=" + runDir.resolve("apiserver"),
                "--tls-cert-file=" + serving.cert(),
                "--tls-private-key-file=" + serving.key(),
                "--client-ca-file=" + pki.ca(),
                "--service-account-issuer=" + SERVICE_ACCOUNT_ISSUER,
                "--service-account-key-file=" + pki.serviceAccountPublicKey(),
                "--service-account-signing-key-file=" + pki.serviceAccountKey(),
                "--service-cluster-ip-range=" + SERVICE_CIDR,
                "--authorization-mode=Node,RBAC",
                // on top of the default chain: what a kubelet may write, and who may block an owner's deletion
                "--enable-admission-plugins=NodeRestriction,OwnerReferencesPermissionEnforcement",
                "--allow-privileged=true",
                // no Service endpoints for a loopback API server (the API rejects loopback endpoint addresses)
                "--endpoint-reconciler-type=none",
                "--profiling=false",
                "--event-ttl=30m"));
        api.addAll(settings.apiServerArgs);
        launch("kube-apiserver", api);
        if (namespaced) {
            startRelay();
        } else {
            url = inClusterUrl;
        }
        admin = client(pki.client("admin", "fencing-test-admin", List.of("system:masters")));
        awaitReady();

        if (settings.controllerManager) {
            Path kubeconfig = writeKubeconfig("kube-controller-manager", inClusterUrl,
                    pki.client("kube-controller-manager", "system:kube-controller-manager", List.of()));
            List<String> kcm = new ArrayList<>(List.of(binaries.resolve("kube-controller-manager").toString(),
                    "--kubeconfig=" + kubeconfig,
                    "--authentication-kubeconfig=" + kubeconfig,
                    "--authorization-kubeconfig=" + kubeconfig,
                    "--secure-port=0",
                    "--leader-elect=false",
                    "--use-service-account-credentials=true",
                    "--service-account-private-key-file=" + pki.serviceAccountKey(),
                    "--root-ca-file=" + pki.ca(),
                    "--cluster-signing-cert-file=" + pki.ca(),
                    "--cluster-signing-key-file=" + pki.caKey(),
                    "--service-cluster-ip-range=" + SERVICE_CIDR,
                    // tests want node failures noticed in seconds, not the production 40-50 s
                    "--node-monitor-period=1s",
                    "--node-monitor-grace-period=10s",
                    "--concurrent-gc-syncs=5",
                    "--profiling=false"));
            kcm.addAll(settings.controllerManagerArgs);
            launch("kube-controller-manager", kcm);
        }
        if (settings.scheduler) {
            Path kubeconfig = writeKubeconfig("kube-scheduler", inClusterUrl,
                    pki.client("kube-scheduler", "system:kube-scheduler", List.of()));
            launch("kube-scheduler", List.of(binaries.resolve("kube-scheduler").toString(),
                    "--kubeconfig=" + kubeconfig,
                    "--authentication-kubeconfig=" + kubeconfig,
                    "--authorization-kubeconfig=" + kubeconfig,
                    "--secure-port=0",
                    "--leader-elect=false",
                    "--profiling=false"));
        }
        if (settings.controllerManager) {
            awaitControllerManager();
        }
        checkAlive();
        LOG.info("event=control-plane-ready run={} url={} in_cluster_url={} controllers={} scheduler={} millis={}",
                runId, url, inClusterUrl, settings.controllerManager, settings.scheduler,
                (System.nanoTime() - started) / 1_000_000);
    }

    private void launch(String name, List<String> command) {
        List<String> full = new ArrayList<>();
        if (settings.netns != null) {
            full.addAll(List.of("ip", "netns", "exec", settings.netns));
        }
        full.addAll(command);
        Path log = logDir.resolve(name + ".log");
        try {
            Process process = new ProcessBuilder(full)
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
                    .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                    .start();
            ControlPlaneRuns.recordChild(runDir, process.pid());
            components.add(new Component(name, process, log));
            LOG.info("event=component-started run={} component={} pid={} log={}", runId, name, process.pid(), log);
        } catch (IOException e) {
            throw new IllegalStateException("cannot start " + name + ": " + e.getMessage(), e);
        }
    }

    private void startRelay() {
        Path socket = runDir.resolve("api.sock");
        launch("api-relay", List.of("socat", "UNIX-LISTEN:" + socket + ",fork,unlink-early,mode=600",
                "TCP:" + settings.address + ":" + NAMESPACED_API_PORT));
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (!Files.exists(socket)) {
            checkAlive();
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("socat did not create " + socket + " within 10 s (is socat "
                        + "installed? scripts/test installs it)");
            }
            pause(50);
        }
        relay = LoopbackRelay.start(socket);
        url = "https://127.0.0.1:" + relay.port();
    }

    private void awaitReady() {
        long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
        String last = "no answer yet";
        while (true) {
            checkAlive();
            try {
                String answer = admin.raw("/readyz");
                if ("ok".equals(answer == null ? null : answer.strip())) {
                    return;
                }
                last = String.valueOf(answer);
            } catch (KubernetesClientException e) {
                last = e.getMessage();
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("kube-apiserver was not ready within " + START_TIMEOUT + " (last: "
                        + last + "); see " + logDir.resolve("kube-apiserver.log"));
            }
            pause(250);
        }
    }

    // The root-CA publisher (a controller-manager controller) writes kube-root-ca.crt into every namespace: once it
    // is in "default", the controller manager runs and talks to the API server.
    private void awaitControllerManager() {
        long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
        while (admin.configMaps().inNamespace("default").withName("kube-root-ca.crt").get() == null) {
            checkAlive();
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("kube-controller-manager did not publish kube-root-ca.crt within "
                        + START_TIMEOUT + "; see " + logDir.resolve("kube-controller-manager.log"));
            }
            pause(250);
        }
    }

    private void checkAlive() {
        for (Component c : components) {
            if (!c.process().isAlive()) {
                throw new IllegalStateException(c.name() + " exited with code " + c.process().exitValue()
                        + "; its log " + c.log() + " ends:\n" + tail(c.log(), 25));
            }
        }
    }

    // ---- clients and credentials --------------------------------------------------------------------------------

    /** @return the https URL the test JVM reaches the API server at */
    public String url() {
        return url;
    }

    /** @return the https URL processes inside the network namespace (or on loopback) reach the API server at */
    public String inClusterUrl() {
        return inClusterUrl;
    }

    /** @return the CA (PEM) that signed the API server's certificate and every client certificate */
    public Path caCertificate() {
        return pki.ca();
    }

    /** @return where the components' logs are */
    public Path logDir() {
        return logDir;
    }

    /** @return this run's id (also in its log directory name) */
    public String runId() {
        return runId;
    }

    /** @return an admin client ({@code system:masters}); shared, closed with the control plane */
    public KubernetesClient adminClient() {
        return admin;
    }

    /** @return a new client authenticated by a client certificate for {@code user} in {@code groups} */
    public KubernetesClient clientAs(String user, String... groups) {
        return client(pki.client(fileName("user-" + user), user, List.of(groups)));
    }

    /** @return a new client authenticated by a one-hour token of the ServiceAccount {@code namespace/name} */
    public KubernetesClient serviceAccountClient(String namespace, String name) {
        String token = requestToken(namespace, name, List.of(SERVICE_ACCOUNT_ISSUER), Duration.ofHours(1), null,
                null);
        return new KubernetesClientBuilder().withConfig(baseConfig(url).withOauthToken(token).build()).build();
    }

    /**
     * Asks the API server (TokenRequest) for a ServiceAccount token, bound to a Pod when {@code podName} is given.
     *
     * @return the signed token
     */
    public String requestToken(String namespace, String serviceAccount, List<String> audiences, Duration ttl,
                               String podName, String podUid) {
        TokenRequestBuilder request = new TokenRequestBuilder().withNewSpec()
                .withAudiences(audiences)
                .withExpirationSeconds(ttl.toSeconds())
                .endSpec();
        if (podName != null) {
            request.editSpec().withBoundObjectRef(new BoundObjectReferenceBuilder().withApiVersion("v1")
                    .withKind("Pod").withName(podName).withUid(podUid).build()).endSpec();
        }
        TokenRequest answer = admin.serviceAccounts().inNamespace(namespace).withName(serviceAccount)
                .tokenRequest(request.build());
        return answer.getStatus().getToken();
    }

    /** @return a kubeconfig (client certificate for {@code user}/{@code groups}) pointing at {@link #inClusterUrl} */
    public Path kubeconfigFor(String user, String... groups) {
        return writeKubeconfig("kubeconfig-" + fileName(user), inClusterUrl,
                pki.client(fileName("user-" + user), user, List.of(groups)));
    }

    /** @return a kubeconfig for a ServiceAccount (a one-hour token) pointing at {@link #inClusterUrl} */
    public Path kubeconfigForServiceAccount(String namespace, String name) {
        String token = requestToken(namespace, name, List.of(SERVICE_ACCOUNT_ISSUER), Duration.ofHours(1), null,
                null);
        String user = "  user:\n    token: " + token + "\n";
        return writeKubeconfigText("kubeconfig-sa-" + fileName(namespace + "-" + name), inClusterUrl, user);
    }

    /** @return an admin kubeconfig pointing at {@link #url()} (for tools run from the test JVM's network) */
    public Path adminKubeconfig() {
        return writeKubeconfig("kubeconfig-admin", url,
                pki.client("admin", "fencing-test-admin", List.of("system:masters")));
    }

    /** @return {@code prefix-<n><random>}, a DNS-1123 name unique in this JVM */
    public String uniqueName(String prefix) {
        return prefix + "-" + NAMES.incrementAndGet() + Integer.toString(ThreadLocalRandom.current()
                .nextInt(36 * 36 * 36), 36);
    }

    private KubernetesClient client(KubePki.Pair identity) {
        Config config = baseConfig(url)
                .withClientCertData(base64(identity.certPem()))
                .withClientKeyData(base64(identity.keyPem()))
                .withClientKeyAlgo("EC")
                .build();
        return new KubernetesClientBuilder().withConfig(config).build();
    }

    private ConfigBuilder baseConfig(String server) {
        return new ConfigBuilder(Config.empty())
                .withMasterUrl(server)
                .withCaCertData(base64(pki.caPem()))
                .withConnectionTimeout(10_000)
                .withRequestTimeout(30_000)
                .withRequestRetryBackoffLimit(2);
    }

    private Path writeKubeconfig(String file, String server, KubePki.Pair identity) {
        String user = "  user:\n    client-certificate-data: " + base64(identity.certPem())
                + "\n    client-key-data: " + base64(identity.keyPem()) + "\n";
        return writeKubeconfigText(file, server, user);
    }

    private Path writeKubeconfigText(String file, String server, String user) {
        String text = "apiVersion: v1\nkind: Config\nclusters:\n- name: test\n  cluster:\n    server: " + server
                + "\n    certificate-authority-data: " + base64(pki.caPem()) + "\n"
                + "users:\n- name: test\n" + user
                + "contexts:\n- name: test\n  context: {cluster: test, user: test}\ncurrent-context: test\n";
        Path path = runDir.resolve(file);
        try {
            Files.writeString(path, text, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalStateException("cannot write " + path + ": " + e.getMessage(), e);
        }
        return path;
    }

    private static String fileName(String text) {
        return text.replaceAll("[^A-Za-z0-9.-]", "_");
    }

    private static String base64(String text) {
        return Base64.getEncoder().encodeToString(text.getBytes(StandardCharsets.US_ASCII));
    }

    // ---- stop ---------------------------------------------------------------------------------------------------

    /** Stops every component (SIGTERM, then SIGKILL), the relay, and deletes the run's data. Idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (admin != null) {
            admin.close();
        }
        if (relay != null) {
            relay.close();
        }
        for (int i = components.size() - 1; i >= 0; i--) {
            stop(components.get(i));
        }
        ControlPlaneRuns.delete(runDir);
        try {
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        } catch (IllegalStateException e) {
            // closing from the hook itself during JVM shutdown
        }
        LOG.info("event=control-plane-stopped run={}", runId);
    }

    private static void stop(Component component) {
        Process process = component.process();
        // socat forks a child per relayed connection; they outlive their parent unless killed with it
        List<ProcessHandle> children = process.descendants().toList();
        if (!process.isAlive()) {
            children.forEach(ProcessHandle::destroyForcibly);
            return;
        }
        process.destroy();
        try {
            if (!process.waitFor(STOP_GRACE.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly();
                process.waitFor(STOP_GRACE.toMillis(), TimeUnit.MILLISECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
        children.forEach(ProcessHandle::destroyForcibly);
    }

    private static int freePort() {
        try (ServerSocket socket = new ServerSocket()) {
            socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new IllegalStateException("no free loopback port: " + e.getMessage(), e);
        }
    }

    private static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while starting the control plane", e);
        }
    }

    private static String tail(Path log, int lines) {
        try {
            List<String> all = Files.readAllLines(log, StandardCharsets.UTF_8);
            return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
        } catch (IOException e) {
            return "(unreadable: " + e.getMessage() + ")";
        }
    }
}
